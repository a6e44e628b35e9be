import { Context } from '@temporalio/activity';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { ChamviError } from '../src/errors/chamvi-error.js';
import { toFailure } from '../common/to-failure.js';

/** What a chamvi activity's failure carries as its details: the attempt that failed. */
export interface FailureDetails {
  readonly attempt: number;
}

/**
 * Runs an activity body and turns what it throws into the failure the catalogue says
 * (`toFailure`, `common/to-failure.ts`): this library's errors that retrying cannot fix, and any
 * error whose type the catalogue lists as not retried (a tool's own `ToolNotAllowedError`, say),
 * fail non-retryably, so Temporal does not retry them whatever the retry policy says and the
 * activities' retry policies need not list the catalogue's types (which would cost every
 * scheduled activity half a kilobyte of history); other errors keep the type Temporal would give
 * them and stay retryable.
 *
 * Every failure carries the attempt that failed as its details ({@link FailureDetails}), so the
 * run's report can say how many attempts a failed call took; a failure with details of its own
 * keeps them. Temporal's own failures (a cancellation, a timeout) and what a cancelled attempt
 * throws pass as they are (Temporal tells a cancelled attempt by the error it throws), unless
 * retrying cannot fix them.
 */
export async function withFailureMapping<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw activityFailure(error, currentAttempt());
  }
}

function activityFailure(error: unknown, attempt: number | undefined): unknown {
  const details = attempt === undefined ? {} : { details: [{ attempt } satisfies FailureDetails] };
  if (ChamviError.isInstance(error) && !error.retryable) return toFailure(error, details);
  if (error instanceof TemporalFailure && !(error instanceof ApplicationFailure)) return error;
  if (error instanceof ApplicationFailure) return toFailure(error, (error.details ?? []).length > 0 ? {} : details);
  if (!(error instanceof Error)) return error;
  // Outside an activity (a unit test calling an activity body) there is no attempt to report.
  if (attempt === undefined || error.name === 'AbortError' || cancelled()) {
    const failure = toFailure(error);
    return failure.nonRetryable === true ? failure : error;
  }
  return toFailure(error, details);
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
    return undefined;
  }
}
