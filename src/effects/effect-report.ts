/**
 * Which path of the effect protocol answered a call:
 * - `recorded`: the store already held the result (or an identical call in flight shared it); nothing ran;
 * - `reconciled`: `alreadyApplied` found the effect remotely; it was recorded, `execute` did not run;
 * - `executed`: `execute` applied the effect.
 * @public
 */
export type EffectOutcome = 'recorded' | 'reconciled' | 'executed';

/** One effect tool call as the engine reports it (logs, the Temporal UI, a run's result, tests). @public */
export interface EffectCallReport {
  /** The call's effect key. */
  readonly key: string;
  /** Name of the effect tool called. */
  readonly toolName: string;
  /** The tool call id, when the call came from a model step. */
  readonly toolCallId?: string;
  /** `executed`, `reconciled` or `recorded`. */
  readonly outcome: EffectOutcome;
  /** Attempts it took (Temporal's activity attempt that answered; 1 in-process). */
  readonly attempts: number;
  /** True when the result could not be written to the store after the effect; a later write is pending. */
  readonly recordPending?: boolean;
}

/** Where the engine logs what a caller should know but that does not fail the call. @public */
export interface EffectLogger {
  /** Logs a warning, with structured fields in `meta`. */
  warn(message: string, meta?: Record<string, unknown>): void;
}

/** The default logger: `console.warn`, prefixed. */
export const consoleEffectLogger: EffectLogger = {
  warn(message, meta) {
    console.warn(`[chamvi] ${message}`, meta ?? '');
  },
};
