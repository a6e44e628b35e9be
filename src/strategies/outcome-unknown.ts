import { ChamviError } from '../errors/chamvi-error.js';
import { EffectOutcomeUnknownError } from '../errors/errors.js';

/**
 * What a remote check can answer. Three values, not two: "not found" is only "not applied" when
 * the read is known to be current. A read that may lag (a replica, an index, a list right after a
 * timeout) or an operation the remote still reports as pending is `unknown`.
 * @public
 */
export type RemoteVerdict<T> =
  | { readonly status: 'applied'; readonly result: T }
  | { readonly status: 'not-applied' }
  | { readonly status: 'unknown'; readonly reason: string };

/** Builders of {@link RemoteVerdict} values. @public */
export const verdict = {
  /** The effect exists remotely; `result` becomes the call's recorded result. */
  applied<T>(result: T): RemoteVerdict<T> {
    return { status: 'applied', result };
  },
  /** The remote is current and the effect is not there: `execute` may run. */
  notApplied<T = never>(): RemoteVerdict<T> {
    return { status: 'not-applied' };
  },
  /** The remote cannot tell yet: fail retryably, run nothing. */
  unknown<T = never>(reason: string): RemoteVerdict<T> {
    return { status: 'unknown', reason };
  },
};

/** An {@link EffectOutcomeUnknownError} for `key` saying why, to throw from `alreadyApplied`. */
export function effectOutcomeUnknown(key: string, reason: string, cause?: unknown): EffectOutcomeUnknownError {
  return new EffectOutcomeUnknownError(
    `Cannot tell yet whether effect "${key}" was applied: ${reason}. Nothing was executed; retry later (the call is retryable) so the remote can settle.`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Turns a three-valued remote check into what `alreadyApplied` returns:
 * `applied` -> its result (`undefined` becomes `null`, which still means "applied"),
 * `not-applied` -> `undefined` (`execute` runs), `unknown` -> throws
 * {@link EffectOutcomeUnknownError} (retryable; `execute` does not run and nothing is recorded).
 * A check that throws an error that is not a `ChamviError` (a timeout, a 5xx) is also
 * `unknown`: a failed read is no evidence of absence.
 *
 * ```ts
 * alreadyApplied: (key) => reconcileRemote(key, async () => {
 *   const op = await api.getOperation(key);            // 404 -> not there
 *   if (op === undefined) return verdict.notApplied();
 *   if (op.state === 'pending') return verdict.unknown('the operation is still pending');
 *   return verdict.applied(op.result);
 * }),
 * ```
 * @public
 */
export async function reconcileRemote<T>(
  key: string,
  check: () => Promise<RemoteVerdict<T>> | RemoteVerdict<T>,
): Promise<T | undefined> {
  let answer: RemoteVerdict<T>;
  try {
    answer = await check();
  } catch (error) {
    if (ChamviError.isInstance(error)) throw error;
    throw effectOutcomeUnknown(
      key,
      `the remote check failed (${error instanceof Error ? error.message : String(error)})`,
      error,
    );
  }
  switch (answer.status) {
    case 'applied':
      return answer.result === undefined ? (null as T) : answer.result;
    case 'not-applied':
      return undefined;
    case 'unknown':
      throw effectOutcomeUnknown(key, answer.reason);
  }
}
