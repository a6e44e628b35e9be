import { IdempotencyKeyInProgressError, IdempotencyKeyReusedError, IdempotentRequestError } from '../errors/errors.js';

/** The header that carries the effect key (Stripe's and the IETF draft's name). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** Options of {@link idempotentFetch}. */
export interface IdempotentFetchOptions {
  /** The `fetch` to use. Default: the global `fetch`. */
  readonly fetch?: typeof fetch;
}

/**
 * `fetch` with the effect key as `Idempotency-Key`, for HTTP APIs that deduplicate by that header
 * (Stripe, Adyen, the IETF `Idempotency-Key` draft). The API remembers the first request per key
 * and answers a repeat with the first answer instead of applying the effect again, so no
 * `alreadyApplied` is needed: after a crash the retry sends the same key.
 *
 * How answers map:
 * - 2xx, including a replay of an earlier answer (often marked `Idempotent-Replayed: true`):
 *   resolves with the `Response`;
 * - 409 (a request with this key is still in progress): throws
 *   {@link IdempotencyKeyInProgressError}, retryable;
 * - 422 (the key was used with a different request): throws {@link IdempotencyKeyReusedError},
 *   not retryable;
 * - any other status: throws {@link IdempotentRequestError}, retryable for 408/425/429/5xx;
 * - a network error (the answer was lost): rejects as `fetch` does; a retry with the same key is safe.
 *
 * The key is sent to a third party and often logged there: the default effect key (run id, tool
 * name, input hash) reveals no input, but a custom key built from secrets or personal data would.
 * HTTP header values must be visible ASCII; APIs cap the length (Stripe: 255).
 */
export async function idempotentFetch(
  url: string | URL,
  init: RequestInit,
  key: string,
  options: IdempotentFetchOptions = {},
): Promise<Response> {
  if (typeof key !== 'string' || !/^[\x21-\x7e]+$/.test(key))
    throw new TypeError('idempotentFetch: the key must be non-empty visible ASCII (an HTTP header value).');
  const headers = new Headers(init.headers);
  headers.set(IDEMPOTENCY_KEY_HEADER, key);
  const response = await (options.fetch ?? fetch)(url, { ...init, headers });
  if (response.ok) return response;
  const where = String(url);
  const detail = await response.text().catch(() => '');
  if (response.status === 409) throw new IdempotencyKeyInProgressError(key, where);
  if (response.status === 422) throw new IdempotencyKeyReusedError(key, where);
  throw new IdempotentRequestError(response.status, key, where, detail.slice(0, 200));
}
