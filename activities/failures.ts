import { ApplicationFailure } from '@temporalio/common';
import { ChamviError } from '../src/errors/chamvi-error.js';

/**
 * Runs an activity body and turns this library's non-retryable errors into non-retryable
 * ApplicationFailures whose `type` is the error's stable name, so Temporal does not retry them
 * whatever the retry policy says, and the workflow can tell them apart (by the failure catalogue,
 * `common/failure-policy.ts`). Other errors pass through; Temporal names their failure type after
 * the error's constructor and retries them unless the catalogue lists that name as not retried.
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
