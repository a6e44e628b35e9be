/** How a recorded effect came to be: applied by `execute`, or found remotely by `alreadyApplied`. @public */
export type EffectOrigin = 'executed' | 'reconciled';

/**
 * A finished effect as the store keeps it. Results are kept as JSON: what comes back is what
 * `JSON.parse(JSON.stringify(result))` gives (a `Date` comes back as its ISO string), except that
 * an `undefined` result is kept as such (`resultUndefined`), distinct from `null`.
 * @public
 */
export interface EffectRecord<Result = unknown> {
  /** The effect key. */
  readonly key: string;
  /** Name of the tool that recorded it. */
  readonly toolName: string;
  /** The result, as `execute` returned it (or `alreadyApplied` found it), kept as JSON. */
  readonly result: Result;
  /** Whether `execute` applied the effect or `alreadyApplied` found it. */
  readonly origin: EffectOrigin;
  /** When the record was written, ISO 8601. */
  readonly recordedAt: string;
  /** The run the key belongs to, when known. */
  readonly runId?: string;
  /** The attempt (1-based, Temporal's activity attempt) that wrote the record, when known. */
  readonly attempt?: number;
  /** Hex SHA-256 of the canonical JSON of the call's input, when known. */
  readonly fingerprint?: string;
  /** True when `execute` returned `undefined`: the effect is done and `result` is `undefined`. */
  readonly resultUndefined?: boolean;
  /** When the store may forget the record, ISO 8601; absent means never. */
  readonly expiresAt?: string;
  /**
   * Set when the effect was applied but its result could not be serialised (a BigInt, a cycle):
   * why. The record then has no result (`resultUndefined`), and every later call of the key fails
   * with `EffectResultNotSerializableError` instead of applying the effect again. A field of its
   * own, never a shape inside `result`, so whatever `execute` returns comes back as is; a custom
   * store must keep it like the other fields.
   */
  readonly unserializable?: string;
}

/** What a caller hands to {@link IEffectStore.put}; the store may fill in `recordedAt` and `expiresAt`. @public */
export type EffectRecordInput<Result = unknown> = Omit<EffectRecord<Result>, 'recordedAt' | 'expiresAt' | 'key'> & {
  readonly recordedAt?: string;
};

/**
 * Where effect results are recorded, keyed by effect key.
 *
 * The minimum anyone can implement: `get` returns the finished record or `undefined`; `put` writes a
 * record. `put` should be first-writer-wins and return the record that is stored (the winner), so
 * every caller sees one result; a store that returns nothing is trusted to have kept this one.
 *
 * Durable stores shared by several workers also implement {@link EffectClaims}, which the protocol
 * uses when present to keep two attempts from applying the same effect side by side.
 * @public
 */
export interface IEffectStore {
  /** The finished record for `key`, or `undefined`. */
  get(key: string): Promise<EffectRecord | undefined>;
  /** Writes the record, first writer wins; returns the stored record (the winner), or nothing. */
  put(key: string, record: EffectRecordInput): Promise<EffectRecord | void>;
}

/** What a claimant says about itself when it claims a key. @public */
export interface ClaimRequest {
  /** Unique token of this attempt; fenced operations must present it. */
  readonly owner: string;
  /**
   * Lease length in milliseconds, measured on the store's clock: a whole number from 0 (allowed;
   * expires at once) to `MAX_LEASE_MS`. The stores this library ships refuse anything else (`NaN`,
   * `Infinity`, a fraction, a negative number) with `InvalidClaimRequestError` before writing,
   * rather than reading it as "never expires" or "already expired".
   */
  readonly leaseMs: number;
  /** Name of the tool whose call claims the key. */
  readonly toolName: string;
  /** The run the key belongs to, kept with the record. */
  readonly runId?: string;
  /** The attempt claiming (1-based, Temporal's activity attempt). */
  readonly attempt?: number;
  /** Hex SHA-256 of the canonical JSON of the call's input, kept with the record. */
  readonly fingerprint?: string;
}

/**
 * Proof of a held claim: owner token plus fence number. The first claim of a key has fence 1, and
 * every later claim of it (after a release, an expiry, a takeover) a higher one: the protocol
 * relies on both (a fence of 1 means no earlier attempt exists that could record late).
 * @public
 */
export interface ClaimToken {
  /** The effect key claimed. */
  readonly key: string;
  /** The claimant's owner token (`ClaimRequest.owner`). */
  readonly owner: string;
  /** The fence number: 1 for the first claim of the key, higher for every later one. */
  readonly fence: number;
}

/** Answer to {@link EffectClaims.claim}. @public */
export type ClaimResult =
  /** The caller now owns the key; `takeover` when it took an expired lease from another attempt. */
  | { readonly status: 'acquired'; readonly token: ClaimToken; readonly takeover: boolean }
  /** The effect is finished; here is its record. */
  | { readonly status: 'done'; readonly record: EffectRecord }
  /** Another attempt holds a live lease. */
  | { readonly status: 'busy'; readonly owner: string; readonly leaseRemainingMs: number };

/** Answer to a fenced operation: `lost` when the token no longer owns the key (`record` is the winner's, if finished). @public */
export type FencedResult =
  | { readonly status: 'ok'; readonly record?: EffectRecord }
  | { readonly status: 'lost'; readonly record?: EffectRecord };

/**
 * Optional capability of durable stores: leases on keys, so two attempts never apply one effect
 * side by side. Every operation is one conditional write on the store's clock.
 *
 * - `claim` takes the key if it is free or its lease has expired (then the fence grows);
 * - `complete` writes the finished record, only while the token still owns the key (even with an
 *   expired lease, as long as nobody took it over);
 * - `release` gives the key back after a failed attempt, so a retry can claim it at once;
 * - `renew` extends the lease.
 * A stale token changes nothing and learns the winner's record.
 * @public
 */
export interface EffectClaims {
  /** Takes the key if it is free or its lease has expired; else says it is done or busy. */
  claim(key: string, request: ClaimRequest): Promise<ClaimResult>;
  /** Writes the finished record while the token still owns the key. */
  complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult>;
  /** Gives the key back after a failed attempt, so a retry can claim it at once. */
  release(token: ClaimToken): Promise<FencedResult>;
  /** Extends the lease to `leaseMs` from now; `leaseMs` follows the rules of {@link ClaimRequest.leaseMs}. */
  renew(token: ClaimToken, leaseMs: number): Promise<FencedResult>;
}

/** Whether a store implements {@link EffectClaims}. */
export function hasClaims(store: IEffectStore): store is IEffectStore & EffectClaims {
  const s = store as Partial<EffectClaims>;
  return (
    typeof s.claim === 'function' &&
    typeof s.complete === 'function' &&
    typeof s.release === 'function' &&
    typeof s.renew === 'function'
  );
}
