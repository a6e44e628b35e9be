import { ApplicationFailure, type ApplicationFailureOptions } from '@temporalio/common';
import { ChamviError } from '../src/errors/chamvi-error.js';
import { NON_RETRYABLE_TYPES } from '../src/errors/failure-policy.js';

const NOT_RETRIED: ReadonlySet<string> = new Set(NON_RETRYABLE_TYPES);

/**
 * `error` as the ApplicationFailure an activity or workflow fails with, by the failure catalogue
 * (`ApplicationFailure.fromError`, then):
 *
 * - `type` is what the catalogue and retry policies match on: a chamvi error's stable `name`, an
 *   ApplicationFailure's own `type`, else the constructor's name (the type Temporal gives a thrown
 *   error itself);
 * - `nonRetryable` when retrying cannot fix it: a chamvi error whose `retryable` is `false`, or any
 *   other error whose type the catalogue lists as not retried ({@link NON_RETRYABLE_TYPES}: a
 *   tool's own `ToolNotAllowedError`, say); an ApplicationFailure already non-retryable stays so;
 * - message, stack and cause are the error's;
 * - `overrides` go on top.
 *
 * Sandbox-safe: workflow code throws `toFailure(new InvalidAgentInputError('…'))` to fail the run
 * with a catalogued type. An ApplicationFailure given is copied, never changed (`fromError` would
 * set the fields on it: a failure thrown from a module-level constant would keep the first call's
 * details).
 */
export function toFailure(error: unknown, overrides: ApplicationFailureOptions = {}): ApplicationFailure {
  const type = failureType(error);
  const source = error instanceof ApplicationFailure ? copyOf(error) : error;
  return ApplicationFailure.fromError(source, {
    ...(type !== undefined ? { type } : {}),
    ...(notRetried(error, type) ? { nonRetryable: true } : {}),
    ...overrides,
  });
}

/** The failure type of `error`, as `toFailure` gives it. */
function failureType(error: unknown): string | undefined {
  if (error instanceof ApplicationFailure) return error.type ?? undefined;
  if (ChamviError.isInstance(error)) return error.name;
  if (!(error instanceof Error)) return undefined;
  return error.constructor?.name ?? error.name;
}

/** A copy of `failure`: its message, stack and fields, in a failure of its own. */
function copyOf(failure: ApplicationFailure): ApplicationFailure {
  const { message, type, nonRetryable, details, category } = failure;
  const cause = failure.cause instanceof Error ? failure.cause : undefined;
  // Typed as `ms`'s string template, which the SDK's declarations do not carry.
  const nextRetryDelay = failure.nextRetryDelay as string | number | null | undefined;
  const copy = new ApplicationFailure(message, type, nonRetryable, details, cause, nextRetryDelay, category);
  copy.stack = failure.stack ?? '';
  return copy;
}

function notRetried(error: unknown, type: string | undefined): boolean {
  if (ChamviError.isInstance(error)) return !error.retryable;
  if (error instanceof ApplicationFailure && error.nonRetryable === true) return true;
  return type !== undefined && NOT_RETRIED.has(type);
}
