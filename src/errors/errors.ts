import { ChamviError } from './chamvi-error.js';

/**
 * A tool call was refused by the run's `allow(toolName)` check. Thrown before the effect store
 * or the remote system is touched. Not retryable: the same call would be refused again.
 */
export class ToolNotAllowedError extends ChamviError {
  static override readonly errorName = 'ToolNotAllowedError';
  readonly retryable = false;
  constructor(readonly toolName: string) {
    super(
      `Tool "${toolName}" is not allowed in this run. Allow it in the run's allow(toolName) check, or remove it from the agent's tools.`,
    );
  }
}

/** An effect tool definition is unusable (for example `execute` is missing). Thrown at definition time. */
export class InvalidEffectToolError extends ChamviError {
  static override readonly errorName = 'InvalidEffectToolError';
  readonly retryable = false;
}

/**
 * A custom `effectKey` returned something other than a non-empty string. Not retryable: the same
 * input yields the same key.
 */
export class InvalidEffectKeyError extends ChamviError {
  static override readonly errorName = 'InvalidEffectKeyError';
  readonly retryable = false;
  constructor(toolName: string, got: unknown) {
    const shown = typeof got === 'string' ? 'an empty string' : `a value of type ${got === null ? 'null' : typeof got}`;
    super(
      `effectKey of tool "${toolName}" returned ${shown}. Return a non-empty string, e.g. \`\${ctx.run.runId}:${toolName}:\${input.id}\`, or omit effectKey to use the default key.`,
    );
  }
}

/**
 * A 0.1-era context field was read (`ctx.runId`, `ctx.agent`, `ctx.trigger`, `ctx.signal`). Reading
 * `undefined` instead would silently collapse custom effect keys across runs, so it fails loudly.
 */
export class LegacyContextFieldError extends ChamviError {
  static override readonly errorName = 'LegacyContextFieldError';
  readonly retryable = false;
  constructor(field: string) {
    super(
      `ctx.${field} was removed in @chamvi/core 0.2: hooks and execute now get the ToolContext. Read ctx.run.${field} instead.`,
    );
  }
}

/**
 * Another attempt holds a live claim on this effect key and did not finish within the wait bound.
 * Retryable: a later attempt finds the winner's record or an expired lease.
 */
export class EffectBusyError extends ChamviError {
  static override readonly errorName = 'EffectBusyError';
  readonly retryable = true;
  constructor(
    readonly key: string,
    waitedMs: number,
  ) {
    super(
      `Effect "${key}" is being applied by another attempt (its claim is still live after waiting ${waitedMs} ms). Retry later; the effect is not applied twice.`,
    );
  }
}

/**
 * This attempt lost its claim on the key (its lease expired and another attempt took over) before
 * the effect was applied, so it did not apply it. Retryable.
 */
export class EffectClaimLostError extends ChamviError {
  static override readonly errorName = 'EffectClaimLostError';
  readonly retryable = true;
  constructor(readonly key: string) {
    super(
      `This attempt lost its claim on effect "${key}" before applying it (lease expired or taken over); nothing was applied. A retry reads the winner's record. Raise the lease or heartbeat more often if this repeats.`,
    );
  }
}

/** The effect store could not be read or written. Retryable; before the effect nothing was executed. */
export class EffectStoreError extends ChamviError {
  static override readonly errorName = 'EffectStoreError';
  readonly retryable = true;
}

/**
 * `alreadyApplied` could not tell whether the effect exists (for example a remote read that may
 * lag right after a timeout). The call fails retryably instead of executing again.
 */
export class EffectOutcomeUnknownError extends ChamviError {
  static override readonly errorName = 'EffectOutcomeUnknownError';
  readonly retryable = true;
}
