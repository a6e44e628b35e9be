import { InvalidClaimRequestError, InvalidEffectStoreSpecError, InvalidOptionError } from '../errors/errors.js';

/**
 * Longest lease a claim may ask for, in ms: 2^31 - 1 (about 24.8 days), the longest delay Node's
 * timers accept. A claim's keep-alive renews its lease on a timer set to a fraction of it, so a longer
 * lease could not be kept alive; real leases are seconds to minutes.
 */
export const MAX_LEASE_MS = 2_147_483_647;

/**
 * Longest record retention, in ms: 100 years. Far beyond any retry horizon, yet small enough that
 * `now + retention` stays an exact integer, a valid `Date` and a valid PostgreSQL interval, so a
 * record write can never fail on its expiry time.
 */
export const MAX_RETENTION_MS = 100 * 365.25 * 24 * 60 * 60 * 1000;

/** Longest timeout a store option accepts, in ms: the longest delay Node's timers accept. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** An accepted range of a whole number of milliseconds, inclusive. */
export interface MsRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Whether `value` is a whole number of milliseconds within `range`. `NaN`, `Infinity`, fractions,
 * negative numbers and non-numbers are all outside: a lease or retention of `NaN` would compare
 * false against every time and make a key unusable forever, or never expire.
 */
function inRange(value: unknown, range: MsRange): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= range.min && value <= range.max;
}

function shown(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  return value === null ? 'null' : `a value of type ${typeof value}`;
}

/**
 * A store option in ms (`retentionMs`, `busyTimeoutMs`, ...), or `fallback` when absent.
 *
 * @throws InvalidEffectStoreSpecError naming the option, the value and the accepted range.
 */
export function msOption(store: string, name: string, value: unknown, fallback: number, range: MsRange): number {
  if (value === undefined) return fallback;
  if (inRange(value, range)) return value;
  throw new InvalidEffectStoreSpecError(
    `${store} option ${name} is ${shown(value)}; use a whole number of milliseconds from ${range.min} to ${range.max}.`,
  );
}

/**
 * An option of something that is not a store (`abortGraceMs` of the activities, `pollMs` of a
 * stream reader, a stream cursor), or `fallback` when absent: a whole number within `range`, of
 * `unit` (default milliseconds; `''` for a plain number), with a `hint` of where good values come from.
 *
 * @throws InvalidOptionError naming the option, the value and the accepted range.
 */
export function wholeOption(
  owner: string,
  name: string,
  value: unknown,
  fallback: number,
  range: MsRange,
  { unit = 'milliseconds', hint }: { readonly unit?: string; readonly hint?: string } = {},
): number {
  if (value === undefined) return fallback;
  if (inRange(value, range)) return value;
  const of = unit === '' ? '' : ` of ${unit}`;
  throw new InvalidOptionError(
    `${owner} option ${name} is ${shown(value)}; use a whole number${of} from ${range.min} to ${range.max}${hint === undefined ? '' : ` (${hint})`}.`,
  );
}

/** Accepted range of `retentionMs`: 1 ms (tests) to {@link MAX_RETENTION_MS}. */
export const RETENTION_RANGE: MsRange = { min: 1, max: MAX_RETENTION_MS };

/** Accepted range of a timeout option: 1 ms to {@link MAX_TIMEOUT_MS}. */
export const TIMEOUT_RANGE: MsRange = { min: 1, max: MAX_TIMEOUT_MS };

/**
 * Checks the lease of a renewal before anything is written: a whole number of ms from 0 (expires
 * at once) to {@link MAX_LEASE_MS}. Returns it.
 *
 * @throws InvalidClaimRequestError naming the value and the accepted range.
 */
export function checkLease(key: string, leaseMs: unknown): number {
  if (inRange(leaseMs, { min: 0, max: MAX_LEASE_MS })) return leaseMs;
  throw new InvalidClaimRequestError(
    `A claim on effect "${key.slice(0, 80)}" asked for leaseMs ${shown(leaseMs)}; use a whole number of milliseconds from 0 to ${MAX_LEASE_MS}. Nothing was written.`,
  );
}

/**
 * Checks a claim request before anything is written: its lease (see {@link checkLease}) and a
 * non-empty owner token. Returns the lease.
 *
 * @throws InvalidClaimRequestError naming the field, the value and what is accepted.
 */
export function checkClaimRequest(
  key: string,
  request: { readonly owner: unknown; readonly leaseMs: unknown },
): number {
  if (typeof request.owner !== 'string' || request.owner.length === 0) {
    throw new InvalidClaimRequestError(
      `A claim on effect "${key.slice(0, 80)}" has owner ${shown(request.owner)}; the owner token must be a non-empty string. Nothing was written.`,
    );
  }
  return checkLease(key, request.leaseMs);
}

/**
 * Checks the `limit` of a prune: a whole number from 0 to `Number.MAX_SAFE_INTEGER`, or `Infinity`
 * for no limit. Returns it.
 *
 * @throws InvalidEffectStoreSpecError naming the value.
 */
export function checkPruneLimit(limit: unknown): number {
  if (limit === Infinity || inRange(limit, { min: 0, max: Number.MAX_SAFE_INTEGER })) return limit;
  throw new InvalidEffectStoreSpecError(
    `prune(limit) got ${shown(limit)}; use a whole number of records from 0 to ${Number.MAX_SAFE_INTEGER}, or Infinity for no limit.`,
  );
}
