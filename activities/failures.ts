import { ApplicationFailure } from '@temporalio/common';
import { ChamviError } from '../src/errors/chamvi-error.js';

/**
 * Runs an activity body and turns this library's non-retryable errors into non-retryable
 * ApplicationFailures whose `type` is the error's stable name, so Temporal does not retry them
 * whatever the retry policy says, and the workflow can tell them apart. Other errors pass
 * through and are retried by the activity's retry policy.
 */
export async function withFailureMapping<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (ChamviError.isInstance(error) && !error.retryable) {
      throw ApplicationFailure.create({ type: error.name, message: error.message, nonRetryable: true, cause: error });
    }
    throw error;
  }
}
