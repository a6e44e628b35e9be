import type { EffectCallInfo } from '../context/tool-context.js';

/** The `ctx.effect` of the context these call options carry, if any. */
function effectOf(options: object): Partial<EffectCallInfo> | undefined {
  const context = (options as { context?: unknown }).context;
  if (typeof context !== 'object' || context === null) return undefined;
  const { effect } = context as { effect?: unknown };
  return typeof effect === 'object' && effect !== null ? effect : undefined;
}

/**
 * The effect key of the call whose `execute` received these options: `options.context.effect.key`,
 * what `effectKey` returned (or the default key). Lets `execute` embed the key in what it creates
 * (`effectMarker(key)`, an `Idempotency-Key`, a message id) without computing it a second time, so
 * the key and the marker can never disagree.
 *
 * ```ts
 * execute: async ({ issue, body }, options) => postComment(issue, `${body}\n${effectMarker(effectKeyOf(options))}`),
 * ```
 *
 * @throws TypeError when the options did not come through the effect protocol (an unwrapped
 *   `execute` called directly has no key).
 * @public
 */
export function effectKeyOf(options: object): string {
  const key = effectOf(options)?.key;
  if (typeof key !== 'string') {
    throw new TypeError(
      'effectKeyOf: these call options carry no effect key (options.context.effect.key). Call the tool through the engine (runAgent, the Temporal worker or wrapToolsForRun), which sets it; an unwrapped execute has none.',
    );
  }
  return key;
}

/**
 * The fence number of the claim under which this `execute` runs (`options.context.effect.fence`):
 * it grows every time another attempt takes the key over, so a remote that remembers the highest
 * fence it has seen per key can refuse a write from an older attempt (a process that was paused
 * past its lease, a "zombie"). It is the one tool that closes the window no store can: between the
 * protocol's last ownership check and the remote write. Pass it where the remote offers a
 * conditional write (a compare-and-swap, a version or precondition header, a `WHERE fence < $1`
 * update).
 *
 * `undefined` when the store has no claims (a plain `IEffectStore`) or the options did not come
 * through the effect protocol.
 * @public
 */
export function effectFenceOf(options: object): number | undefined {
  const fence = effectOf(options)?.fence;
  return typeof fence === 'number' ? fence : undefined;
}
