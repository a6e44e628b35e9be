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
  /** How the call ended: an `EffectOutcome`, or `failed` or `denied`. */
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
  /**
   * How the call's undo went, once the run compensated (`compensateOn`) or was rolled back
   * (`rollbackRun`); absent for a call that was not compensated (it did not apply, or its tool has
   * no `compensate`).
   * @beta
   */
  readonly compensation?: CompensationReport;
}

/**
 * The undo of one applied effect call (`compensate`, under the key `<key>:compensate`):
 * `compensated` (the protocol's `outcome` says how: `executed` undid it now, `reconciled` found it
 * undone by `alreadyCompensated`, `recorded` was undone before), or `compensation-failed` with its
 * last error after every attempt, in which case the run's rollback is incomplete.
 * @beta
 */
export interface CompensationReport {
  /** Whether the effect was undone (`compensated`) or its undo kept failing (`compensation-failed`). */
  readonly status: 'compensated' | 'compensation-failed';
  /** `compensated`: which path of the effect protocol answered. */
  readonly outcome?: EffectOutcome;
  /** Attempts the compensation took: the one that answered, or those that failed. */
  readonly attempts: number;
  /** `compensation-failed`: the last attempt's failure (its type, and its message with its causes). */
  readonly error?: { readonly type: string; readonly message: string };
}

/**
 * An applied effect call as a rollback needs it: enough to schedule its compensation (whose
 * activity checks it against the store's record). A run's checkpoint carries them across
 * continue-as-new.
 * @beta
 */
export interface AppliedEffect {
  /** The applied call's effect key (its undo runs under `<key>:compensate`). */
  readonly key: string;
  /** The effect tool that applied it, which holds its `compensate`. */
  readonly toolName: string;
  /** The model's id of the call. */
  readonly toolCallId: string;
  /** The call's input, as the model gave it (the compensation activity checks it against the record's fingerprint). */
  readonly input: unknown;
}

/** When a run undoes its applied effects itself: on `failure` (it fails), on `cancel` (it is cancelled). @beta */
export type CompensateOn = ReadonlyArray<'failure' | 'cancel'>;
