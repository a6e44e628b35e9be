import { randomUUID } from 'node:crypto';
import { EffectBusyError, EffectClaimLostError } from '../errors/errors.js';
import type { ClaimRequest, ClaimToken, EffectClaims, EffectRecord } from '../stores/effect-store.js';
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

/** A held claim: its token, its length, and when it last started (measured before the request was sent, so never late). */
export interface Lease {
  readonly claims: EffectClaims;
  readonly token: ClaimToken;
  readonly leaseMs: number;
  since: number;
}

/**
 * Claims `key`. A live lease of another attempt is waited for with growing pauses (25 ms up to
 * 500 ms, never past its expiry) until `busyWaitMs` have passed, then {@link EffectBusyError}.
 * A finished key answers with its record instead.
 */
export async function claimKey(
  claims: EffectClaims,
  key: string,
  request: ClaimRequest,
  busyWaitMs: number,
  signal: AbortSignal,
): Promise<{ lease: Lease } | { record: EffectRecord }> {
  const started = Date.now();
  for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
    const sent = Date.now();
    let claimed;
    try {
      claimed = await claims.claim(key, request);
    } catch (error) {
      throw storeFailure(error, key, 'claim');
    }
    if (claimed.status === 'acquired')
      return { lease: { claims, token: claimed.token, leaseMs: request.leaseMs, since: sent } };
    if (claimed.status === 'done') return { record: claimed.record };
    const waited = Date.now() - started;
    if (waited >= busyWaitMs) throw new EffectBusyError(key, waited);
    signal.throwIfAborted();
    await sleep(Math.min(pause, claimed.leaseRemainingMs + 1, busyWaitMs - waited));
  }
}

/**
 * The last check before the effect. Nobody can take a key over before its lease runs out, so a
 * lease younger than half its length needs no round trip (and no promise: `undefined` comes back);
 * an older one is renewed, and a lost one stops the call before anything is applied.
 */
export function assertStillOwner(lease: Lease): Promise<void> | undefined {
  return Date.now() - lease.since < lease.leaseMs / 2 ? undefined : renewBeforeEffect(lease);
}

async function renewBeforeEffect(lease: Lease): Promise<void> {
  const sent = Date.now();
  let renewed;
  try {
    renewed = await lease.claims.renew(lease.token, lease.leaseMs);
  } catch (error) {
    throw storeFailure(error, lease.token.key, 'renew');
  }
  if (renewed.status === 'lost') throw new EffectClaimLostError(lease.token.key);
  lease.since = sent;
}

/** Gives the key back after a failed attempt; a failure is logged (the lease then runs out by itself). */
export async function releaseQuietly(lease: Lease, logger: EffectLogger): Promise<void> {
  try {
    await lease.claims.release(lease.token);
  } catch (error) {
    logger.warn(`Could not release the claim on effect "${lease.token.key}"; it frees itself when its lease expires.`, {
      error: describeError(error),
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
