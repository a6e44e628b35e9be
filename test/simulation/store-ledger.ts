import type { ClaimResult, EffectRecord, FencedResult } from '../../src/stores/effect-store.js';

/** A claim as the store granted it, followed from the store's answers (the invariants' view). */
export interface ClaimHistory {
  readonly owner: string;
  readonly fence: number;
  readonly leaseMs: number;
  /** Store-arrival time of the claim (virtual ms). */
  readonly acquiredAt: number;
  /** Lease end as the store last set it (virtual ms). */
  leaseUntil: number;
  /** Arrival times of the renewals the store accepted. */
  readonly renewedAt: number[];
  /** When and how the claim stopped being the key's claim, if it did. */
  ended?: { readonly at: number; readonly how: 'released' | 'completed' | 'ended by put' | 'taken over' };
  /** The claim this one took over (expired lease of another attempt), if any. */
  readonly tookOver?: ClaimHistory;
}

/** The first finished record of the key and who made it durable. */
export interface DurableRecord {
  readonly at: number;
  readonly by: string;
  readonly via: 'complete' | 'put';
  readonly record: EffectRecord;
}

/** One store request as sent by an attempt. */
export interface StoreRequest {
  readonly op: 'get' | 'put' | 'claim' | 'complete' | 'release' | 'renew';
  /** The attempt that sent it (`A2`), or the process for a read, which names no owner. */
  readonly by: string;
  readonly process: string;
  readonly sentAt: number;
  readonly fault: string;
  /** Owner token the request presented (fenced operations) or asked for (claim). */
  readonly owner?: string;
  arrivedAt?: number;
  answered?: 'ok' | 'error';
  answeredAt?: number;
  /** A fenced operation's status, or the claim's (acquired, busy, done), as the store answered. */
  status?: string;
}

/**
 * What the store did in one history, recorded at each request's arrival from the store's own
 * answers: every request, every claim with its lease, and the first record. The simulator has one
 * effect key per history, so this is the key's whole life. Also watches that the record, once
 * written, never changes.
 */
export class StoreLedger {
  readonly requests: StoreRequest[] = [];
  readonly claims: ClaimHistory[] = [];
  durable: DurableRecord | undefined;
  /** Set when a later read found a record different from the first one. */
  overwritten: { readonly at: number; readonly was: string; readonly now: string } | undefined;
  private current: ClaimHistory | undefined;

  constructor(private readonly now: () => number) {}

  /** The claim that holds the key right now, if any (live or expired, not ended). */
  currentClaim(): ClaimHistory | undefined {
    return this.current;
  }

  /** The claim of `owner`, if it was ever granted. */
  claimOf(owner: string): ClaimHistory | undefined {
    return this.claims.find((c) => c.owner === owner);
  }

  /** Whether `owner` holds the key with a live lease right now. */
  holdsLive(owner: string): boolean {
    return this.current?.owner === owner && this.current.leaseUntil > this.now();
  }

  onClaim(owner: string, leaseMs: number, result: ClaimResult): void {
    if (result.status !== 'acquired') return;
    const at = this.now();
    const previous = this.current?.owner === owner ? undefined : this.current;
    if (previous !== undefined) previous.ended = { at, how: 'taken over' };
    const claim: ClaimHistory = {
      owner,
      fence: result.token.fence,
      leaseMs,
      acquiredAt: at,
      leaseUntil: at + Math.max(0, leaseMs),
      renewedAt: [],
      ...(previous === undefined ? {} : { tookOver: previous }),
    };
    this.claims.push(claim);
    this.current = claim;
  }

  onRenew(owner: string, leaseMs: number, result: FencedResult): void {
    if (result.status !== 'ok' || this.current?.owner !== owner) return;
    const at = this.now();
    this.current.leaseUntil = at + Math.max(0, leaseMs);
    this.current.renewedAt.push(at);
  }

  onRelease(owner: string, result: FencedResult): void {
    if (result.status !== 'ok' || this.current?.owner !== owner) return;
    this.current.ended = { at: this.now(), how: 'released' };
    this.current = undefined;
  }

  onRecord(by: string, via: 'complete' | 'put', owner: string | undefined, stored: EffectRecord | undefined): void {
    if (stored === undefined) return;
    if (this.durable === undefined) {
      this.durable = { at: this.now(), by, via, record: stored };
      if (this.current !== undefined) {
        const how = via === 'complete' && this.current.owner === owner ? 'completed' : 'ended by put';
        this.current.ended = { at: this.now(), how };
        this.current = undefined;
      }
    }
  }

  /** Compares what the store holds now with the first record (call after every request). */
  watch(found: EffectRecord | undefined): void {
    if (this.durable === undefined || this.overwritten !== undefined) return;
    const was = JSON.stringify(this.durable.record.result ?? null) + this.durable.record.origin;
    const now = found === undefined ? 'no record' : JSON.stringify(found.result ?? null) + found.origin;
    if (now !== was) this.overwritten = { at: this.now(), was, now };
  }
}
