/**
 * What the effect protocol tells an observer (`EffectEnv.observe`) while one call runs, in the
 * order it happens. Observers see the protocol, they cannot steer it: a throwing observer is the
 * caller's bug, so keep them to recording (spans, counters).
 *
 * - `claim`: `acquired` (the key was free), `takeover` (an expired lease of another attempt was
 *   taken over; the fence grew), with the fence of the lease now held; `busy` (another attempt's
 *   live claim, or an identical call in flight in this process, is waited for; sent once per call);
 * - `alreadyApplied`: what the tool's `alreadyApplied` answered (`found`: the effect is there,
 *   it is recorded and `execute` does not run; `nothing`); absent for tools without one;
 * - `execute`: `start` right before `execute` is called, `end` when it returned or threw (`error`);
 * - `record`: `done` when the result was recorded, `pending` when the write failed after the
 *   effect (the call succeeds and the record is written later).
 */
export type EffectEvent =
  | { readonly type: 'claim'; readonly result: 'acquired' | 'takeover'; readonly fence: number }
  | { readonly type: 'claim'; readonly result: 'busy' }
  | { readonly type: 'alreadyApplied'; readonly result: 'found' | 'nothing' }
  | { readonly type: 'execute'; readonly phase: 'start' }
  | { readonly type: 'execute'; readonly phase: 'end'; readonly error?: unknown }
  | { readonly type: 'record'; readonly result: 'done' | 'pending' };
