import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import { DEFAULT_TOOL_OPTIONS, toActivityOptions } from '../common/activity-options.js';
import { failurePolicyOf } from '../src/errors/failure-policy.js';
import type { ToolActivityOptions } from '../common/index.js';

/**
 * What the model is told when a call failed, by the failure catalogue: failures it can correct or
 * must know about (not retried) are told as `<type>: <message>`, the last error after the retries
 * as such; failures whose catalogue entry says `run` fail the run instead.
 */
export function failureForModel(toolName: string, error: unknown): string {
  // A cancelled run stops here; the model is not asked to carry on.
  if (isCancellation(error)) throw error;
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    const policy = failurePolicyOf(cause.type);
    if (policy?.then === 'run')
      throw ApplicationFailure.create({
        type: cause.type ?? undefined,
        message: cause.message,
        nonRetryable: true,
        cause,
      });
    if (policy !== undefined && (policy.retried === false || cause.nonRetryable))
      return `${cause.type ?? ''}: ${cause.message}`;
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return `Tool ${toolName} failed after its retries: ${message}`;
}

/**
 * How many attempts a failed call took: the attempt the activity put in its failure's details
 * (`activities/failures.ts`), else the retry policy's maximum when Temporal says it was reached
 * (a last attempt that timed out carries no details), else 1.
 */
export function attemptsOf(error: unknown, options: ToolActivityOptions | undefined): number {
  const activity = error instanceof ActivityFailure ? error : undefined;
  const cause = activity?.cause;
  if (cause instanceof ApplicationFailure) {
    const attempt = (cause.details?.[0] as { attempt?: unknown } | undefined)?.attempt;
    if (typeof attempt === 'number' && attempt > 0) return attempt;
  }
  const maximum = toActivityOptions(DEFAULT_TOOL_OPTIONS, options).retry?.maximumAttempts;
  if (activity?.retryState === 'MAXIMUM_ATTEMPTS_REACHED' && maximum !== undefined) return maximum;
  return 1;
}

/** The last attempt's failure: its type and its message followed by its causes' messages. */
export function lastError(error: unknown): { type: string; message: string } {
  const cause = error instanceof ActivityFailure && error.cause !== undefined ? error.cause : error;
  const type =
    cause instanceof ApplicationFailure
      ? (cause.type ?? 'Error')
      : cause instanceof Error
        ? cause.constructor.name
        : typeof cause;
  const messages: string[] = [];
  for (let at: unknown = cause; at instanceof Error && messages.length < 5; at = at.cause) {
    if (at.message !== '' && !messages.includes(at.message)) messages.push(at.message);
  }
  return { type, message: messages.length > 0 ? messages.join(': ') : String(cause) };
}
