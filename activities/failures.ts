import { Context } from '@temporalio/activity';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { ChamviError } from '../src/errors/chamvi-error.js';
import { NON_RETRYABLE_TYPES } from '../common/failure-policy.js';

/** What a chamvi activity's failure carries as its details: the attempt that failed. */
export interface FailureDetails {
  readonly attempt: number;
}

/**
 * Runs an activity body and turns this library's non-retryable errors into non-retryable
 * ApplicationFailures whose `type` is the error's stable name, so Temporal does not retry them
 * whatever the retry policy says, and the workflow can tell them apart (by the failure catalogue,
 * `common/failure-policy.ts`). Other errors keep the type Temporal would give them (the error's
 * constructor name) and stay retryable unless the catalogue lists that type as not retried: then
 * they fail non-retryably here (a tool's own `ToolNotAllowedError`, say), so the activities'
 * retry policies need not list the catalogue's types (which would cost every scheduled activity
 * half a kilobyte of history).
 *
 * Every failure carries the attempt that failed as its details ({@link FailureDetails}), so the
 * run's report can say how many attempts a failed call took.
 */
export async function withFailureMapping<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    const attempt = currentAttempt();
    const details = attempt === undefined ? undefined : [{ attempt } satisfies FailureDetails];
    if (ChamviError.isInstance(error) && !error.retryable) {
      throw ApplicationFailure.create({
        type: error.name,
        message: error.message,
        nonRetryable: true,
        cause: error,
        ...(details !== undefined ? { details } : {}),
      });
    }
    throw notRetriedIfCatalogued(details === undefined ? error : withDetails(error, details));
  }
}

const NOT_RETRIED: ReadonlySet<string> = new Set(NON_RETRYABLE_TYPES);

/** The failure, non-retryable when the catalogue says its type is not retried. */
function notRetriedIfCatalogued(error: unknown): unknown {
  if (error instanceof Error && !(error instanceof TemporalFailure) && NOT_RETRIED.has(error.constructor?.name)) {
    const failure = ApplicationFailure.create({
      message: error.message,
      type: error.constructor.name,
      nonRetryable: true,
      cause: error,
    });
    failure.stack = error.stack ?? '';
    return failure;
  }
  if (!(error instanceof ApplicationFailure) || error.nonRetryable) return error;
  if (typeof error.type !== 'string' || !NOT_RETRIED.has(error.type)) return error;
  const failure = ApplicationFailure.create({
    message: error.message,
    type: error.type,
    nonRetryable: true,
    ...(error.details !== undefined && error.details !== null ? { details: [...error.details] } : {}),
    ...(error.cause !== undefined ? { cause: error.cause } : {}),
  });
  failure.stack = error.stack ?? '';
  return failure;
}

/** `error` as an ApplicationFailure with `details`, keeping its type, message, stack and retry settings. */
function withDetails(error: unknown, details: unknown[]): unknown {
  // Cancellations and timeouts are Temporal's own; a failure with details of its own keeps them.
  if (error instanceof TemporalFailure && !(error instanceof ApplicationFailure)) return error;
  if (error instanceof ApplicationFailure) {
    if ((error.details ?? []).length > 0) return error;
    const failure = ApplicationFailure.create({
      message: error.message,
      ...(error.type !== undefined && error.type !== null ? { type: error.type } : {}),
      nonRetryable: error.nonRetryable ?? false,
      details,
      ...(error.cause !== undefined ? { cause: error.cause } : {}),
      ...(error.nextRetryDelay !== undefined && error.nextRetryDelay !== null
        ? { nextRetryDelay: error.nextRetryDelay as string | number }
        : {}),
      ...(error.category !== undefined && error.category !== null ? { category: error.category } : {}),
    });
    failure.stack = error.stack ?? '';
    return failure;
  }
  // A cancelled attempt must end as cancelled, which Temporal tells by the error it throws.
  if (!(error instanceof Error) || error.name === 'AbortError' || cancelled()) return error;
  // The type Temporal itself gives a plain error (its constructor's name), so the catalogue and
  // retry policies' nonRetryableErrorTypes match as before.
  const failure = ApplicationFailure.create({
    message: error.message,
    type: ChamviError.isInstance(error) ? error.name : (error.constructor?.name ?? error.name),
    nonRetryable: false,
    details,
    ...(error.cause instanceof Error ? { cause: error.cause } : {}),
  });
  failure.stack = error.stack ?? '';
  return failure;
}

function cancelled(): boolean {
  try {
    return Context.current().cancellationSignal.aborted;
  } catch {
    return false;
  }
}

function currentAttempt(): number | undefined {
  try {
    return Context.current().info.attempt;
  } catch {
    // Outside an activity (a unit test calling an activity body): no attempt to tell.
    return undefined;
  }
}
