import type { EffectCallReport, EffectOutcome } from './effect-call-report.js';

/**
 * How an effect call of a run ended, as the run's report says it: the protocol's outcomes
 * (`executed`, `reconciled`, `recorded`), `failed` (every attempt failed, or one failed in a way
 * no retry fixes; the model was told) and `denied` (the approval was refused: nothing ran).
 * @public
 */
export type RunEffectOutcome = EffectOutcome | 'failed' | 'denied';

/**
 * One effect-tool call of a run, as the run's result (`effects`), the progress query
 * (`chamvi.progress`) and `chamvi run --wait` list it: every call, whatever became of it.
 * @public
 */
export interface RunEffectReport extends Omit<EffectCallReport, 'outcome'> {
  readonly outcome: RunEffectOutcome;
  /**
   * Attempts the call took: the attempt that answered, the attempts that failed (`failed`), `0`
   * for a call that never ran (`denied`).
   */
  readonly attempts: number;
  /** `failed`: the last attempt's failure (its type, the error's name, and its message with its causes). */
  readonly error?: { readonly type: string; readonly message: string };
  /** `denied`: why (the approver's reason, the approval policy, the timeout). */
  readonly reason?: string;
}
