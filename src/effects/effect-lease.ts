import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { EffectBusyError, EffectClaimLostError } from '../errors/errors.js';
import type { ClaimRequest, ClaimToken, EffectClaims, EffectRecord, IEffectStore } from '../stores/effect-store.js';
import type { EffectLogger } from './effect-report.js';
import { describeError, storeFailure } from './store-failure.js';

/** Default lease on a claimed key while its effect runs, in ms. */
export const DEFAULT_LEASE_MS = 60_000;
/** Default wait for another attempt's live claim before `EffectBusyError`, in ms. */
export const DEFAULT_BUSY_WAIT_MS = 10_000;

// Claim owner tokens only need to be unique: one random prefix per process and a counter, not a UUID per call.
const OWNER_PREFIX = randomUUID();
let ownerSeq = 0;
/** A claim owner token unique to this call. */
export const nextOwner = (): string => `${OWNER_PREFIX}:${++ownerSeq}`;

/**
 * Milliseconds on this process's monotonic clock. Lease ages are measured on it, never on the wall
 * clock: a wall clock stepped back would make a lost lease look young.
 */
export const monotonicNow = (): number => performance.now();

/**
 * A held claim: its token, its length, and when it last started on the monotonic clock (measured
 * before the request was sent, so never late). `lost` is set once a renewal learned that another
 * attempt owns the key (or the claim was given up); from then on nothing may be applied under it.
 * `winner` is the finished record such a renewal brought back, if any.
 */
export interface Lease {
  readonly store: IEffectStore & EffectClaims;
  readonly token: ClaimToken;
  readonly leaseMs: number;
  since: number;
  lost: boolean;
  winner?: EffectRecord;
}

/**
 * Claims `key`. A live lease of another attempt is waited for with growing pauses (25 ms up to
 * 500 ms, never past its expiry) until `busyWaitMs` have passed, then {@link EffectBusyError};
 * `onBusy` is called when that wait begins. A finished key answers with its record instead.
 */
export async function claimKey(
  store: IEffectStore & EffectClaims,
  key: string,
  request: ClaimRequest,
  busyWaitMs: number,
  signal: AbortSignal,
  onBusy?: () => void,
): Promise<{ lease: Lease } | { record: EffectRecord }> {
  const started = monotonicNow();
  for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
    const sent = monotonicNow();
    let claimed;
    try {
      claimed = await store.claim(key, request);
    } catch (error) {
      throw storeFailure(error, key, 'claim');
    }
    if (claimed.status === 'acquired')
      return { lease: { store, token: claimed.token, leaseMs: request.leaseMs, since: sent, lost: false } };
    if (claimed.status === 'done') return { record: claimed.record };
    if (pause === 25) onBusy?.();
    const waited = Math.round(monotonicNow() - started);
    if (waited >= busyWaitMs) throw new EffectBusyError({ key, waitedMs: waited });
    signal.throwIfAborted();
    await sleep(Math.min(pause, claimed.leaseRemainingMs + 1, busyWaitMs - waited));
  }
}

/**
 * The last check before the effect, one store round trip:
 * - a lease the keeper already saw lost stops the call ({@link EffectClaimLostError});
 * - a lease younger than half its length cannot have been taken over (the store only hands an
 *   expired lease to another attempt), but it can have been ended by a late attempt's
 *   first-writer-wins `put` of the same effect: a read finds that record, which is returned
 *   instead of applying the effect again. Only an attempt that claimed the key before can write
 *   such a record, so the first claim of a key (fence 1) skips the read;
 * - an older lease is renewed; a lost one stops the call before anything is applied.
 *
 * Between this check and the remote write the call is not protected by the store any more: a
 * process paused there past its lease can still apply late (see the README's guarantees).
 */
export async function assertStillOwner(lease: Lease): Promise<EffectRecord | undefined> {
  const found = await checkOwnership(lease);
  // The lease keeper may have learned of a loss while the check was on its way: it counts too.
  if (found === undefined && lease.lost) {
    if (lease.winner !== undefined) return lease.winner;
    throw new EffectClaimLostError(lease.token.key);
  }
  return found;
}

async function checkOwnership(lease: Lease): Promise<EffectRecord | undefined> {
  if (lease.lost) return undefined;
  if (monotonicNow() - lease.since < lease.leaseMs / 2) {
    if (lease.token.fence <= 1) return undefined;
    let record: EffectRecord | undefined;
    try {
      record = await lease.store.get(lease.token.key);
    } catch (error) {
      throw storeFailure(error, lease.token.key, 'read');
    }
    if (record !== undefined) lease.lost = true;
    return record;
  }
  const sent = monotonicNow();
  let renewed;
  try {
    renewed = await lease.store.renew(lease.token, lease.leaseMs);
  } catch (error) {
    throw storeFailure(error, lease.token.key, 'renew');
  }
  if (renewed.status === 'lost') {
    lease.lost = true;
    return renewed.record;
  }
  lease.since = Math.max(lease.since, sent);
  return undefined;
}

/** Gives the key back after a failed attempt; a failure is logged (the lease then runs out by itself). */
export async function releaseQuietly(lease: Lease, logger: EffectLogger): Promise<void> {
  if (lease.lost) return;
  lease.lost = true;
  try {
    await lease.store.release(lease.token);
  } catch (error) {
    logger.warn(`Could not release the claim on effect "${lease.token.key}"; it frees itself when its lease expires.`, {
      error: describeError(error),
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
