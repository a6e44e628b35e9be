import { ChamviError } from '../errors/chamvi-error.js';
import { EffectStoreError } from '../errors/errors.js';

/**
 * What a store error before the effect becomes: an {@link EffectStoreError} (retryable) saying that
 * nothing was applied. Errors of this library pass through unchanged.
 */
export function storeFailure(error: unknown, key: string, what: 'read' | 'claim' | 'renew'): Error {
  if (ChamviError.isInstance(error)) return error;
  return new EffectStoreError(
    `Could not ${what} effect "${key}" in the effect store before applying it, so nothing was applied: ${describeError(error)}. Check that the store is reachable; the call can be retried.`,
    { cause: error },
  );
}

/** The message of an error, or the thrown value as text. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
