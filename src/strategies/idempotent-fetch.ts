import {
  EffectFenceRefusedError,
  IdempotencyKeyInProgressError,
  IdempotencyKeyReusedError,
  IdempotentRequestError,
} from '../errors/errors.js';

/** The header that carries the effect key (Stripe's and the IETF draft's name). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** Options of {@link idempotentFetch}. @public */
export interface IdempotentFetchOptions {
  /** The `fetch` to use. Default: the global `fetch`. */
  readonly fetch?: typeof fetch;
  /**
   * The header in which the API accepts a fencing token, for APIs that offer such a
   * precondition: the API remembers the highest fence it accepted per `Idempotency-Key` and
   * answers 412 to a request with a lower one. Sent only when {@link fence} is a number. No
   * standard name exists; use the one the API documents.
   */
  readonly fenceHeader?: string;
  /**
   * The claim's fence number, `effectFenceOf(options)` in `execute`: it grows every time another
   * attempt takes the key over, so the API can refuse the late request of an attempt that was
   * paused past its lease. `undefined` (a store without claims) sends no fence header, and then
   * the API checks nothing beyond the key.
   */
  readonly fence?: number;
}

/**
 * `fetch` with the effect key as `Idempotency-Key`, for HTTP APIs that deduplicate by that header
 * (Stripe, Adyen, the IETF `Idempotency-Key` draft). The API remembers the first request per key
 * and answers a repeat with the first answer instead of applying the effect again, so no
 * `alreadyApplied` is needed: after a crash the retry sends the same key.
 *
 * ```ts
 * execute: async (input, options) =>
 *   (await idempotentFetch(url, { method: 'POST', body: JSON.stringify(input) }, effectKeyOf(options), {
 *     fenceHeader: 'Fencing-Token', // only where the API documents one
 *     fence: effectFenceOf(options),
 *   })).json(),
 * ```
 *
 * What it guarantees: one application per key **for as long as the API remembers the key**
 * (Stripe: 24 hours), for crashes and for an attempt paused past its lease alike, since the late
 * request carries the same key. Once the API has forgotten the key, a late request applies again,
 * unless a fence is sent (`fenceHeader` and `fence`) and the API keeps the highest fence per key
 * longer than its replays: then the older attempt's request is refused with 412.
 *
 * How answers map:
 * - 2xx, including a replay of an earlier answer (often marked `Idempotent-Replayed: true`):
 *   resolves with the `Response`;
 * - 409 (a request with this key is still in progress): throws
 *   {@link IdempotencyKeyInProgressError}, retryable;
 * - 412 to a request that carried a fence (a newer attempt already wrote): throws
 *   {@link EffectFenceRefusedError}, retryable (the retry finds the newer attempt's record);
 * - 422 (the key was used with a different request): throws {@link IdempotencyKeyReusedError},
 *   not retryable;
 * - any other status: throws {@link IdempotentRequestError}, retryable for 408/425/429/5xx;
 * - a network error (the answer was lost): rejects as `fetch` does; a retry with the same key is safe.
 *
 * The key is sent to a third party and often logged there: the default effect key (run id, tool
 * name, input hash) reveals no input, but a custom key built from secrets or personal data would.
 * HTTP header values must be visible ASCII; APIs cap the length (Stripe: 255).
 * @public
 */
export async function idempotentFetch(
  url: string | URL,
  init: RequestInit,
  key: string,
  options: IdempotentFetchOptions = {},
): Promise<Response> {
  if (typeof key !== 'string' || !/^[\x21-\x7e]+$/.test(key))
    throw new TypeError('idempotentFetch: the key must be non-empty visible ASCII (an HTTP header value).');
  const fence = fenceToSend(options);
  const headers = new Headers(init.headers);
  headers.set(IDEMPOTENCY_KEY_HEADER, key);
  if (fence !== undefined) headers.set(fence.header, String(fence.value));
  const response = await (options.fetch ?? fetch)(url, { ...init, headers });
  if (response.ok) return response;
  const where = String(url);
  const detail = await response.text().catch(() => '');
  if (response.status === 409) throw new IdempotencyKeyInProgressError({ key, url: where });
  if (response.status === 412 && fence !== undefined)
    throw new EffectFenceRefusedError({ key, fence: fence.value, url: where });
  if (response.status === 422) throw new IdempotencyKeyReusedError({ key, url: where });
  throw new IdempotentRequestError({ status: response.status, key, url: where, detail: detail.slice(0, 200) });
}

function fenceToSend(options: IdempotentFetchOptions): { header: string; value: number } | undefined {
  const { fenceHeader, fence } = options;
  if (fenceHeader === undefined) {
    if (fence !== undefined)
      throw new TypeError('idempotentFetch: a fence needs fenceHeader, the header in which the API accepts it.');
    return undefined;
  }
  // An HTTP token (RFC 9110): what Headers accepts as a name, checked here to fail with our message.
  if (typeof fenceHeader !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(fenceHeader))
    throw new TypeError(`idempotentFetch: fenceHeader ${JSON.stringify(fenceHeader)} is not an HTTP header name.`);
  if (fence === undefined) return undefined;
  if (!Number.isSafeInteger(fence) || fence < 1)
    throw new TypeError(`idempotentFetch: fence ${String(fence)} is not a fence number (a whole number from 1).`);
  return { header: fenceHeader, value: fence };
}
