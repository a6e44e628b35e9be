import type {
  ClaimRequest,
  ClaimResult,
  ClaimToken,
  EffectClaims,
  EffectRecord,
  EffectRecordInput,
  FencedResult,
  IEffectStore,
} from './effect-store.js';
import { DEFAULT_RETENTION_MS, toStoredRecord, type RetentionOptions } from './record-codec.js';

interface Entry {
  owner?: string;
  fence: number;
  leaseUntil: number;
  /** The finished record as JSON text, so reads get fresh copies and JSON semantics match the durable stores. */
  record?: string;
  expiresAt?: number;
}

/** Options of {@link MemoryEffectStore}. */
export interface MemoryEffectStoreOptions extends RetentionOptions {
  /** Clock in epoch ms (tests move it). Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * An effect store in this process's memory, with claims. For tests and single-process runs:
 * everything is lost when the process exits, so it cannot close the crash window across worker
 * processes. Records are kept as JSON, exactly like the durable stores keep them.
 */
export class MemoryEffectStore implements IEffectStore, EffectClaims {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly retentionMs: number;

  constructor(options: MemoryEffectStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  }

  /** The finished record for `key`, or `undefined` (also when it has expired). */
  get(key: string): Promise<EffectRecord | undefined> {
    return Promise.resolve(this.finished(key));
  }

  /** First writer wins: writes the record unless one is already finished; returns the stored one. */
  put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    const winner = this.finished(key);
    if (winner !== undefined) return Promise.resolve(winner);
    const entry = this.entries.get(key);
    return Promise.resolve(this.finish(key, entry?.fence ?? 0, record));
  }

  claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    const now = this.now();
    const done = this.finished(key);
    if (done !== undefined) return Promise.resolve({ status: 'done', record: done });
    const entry = this.entries.get(key);
    if (entry?.owner !== undefined && entry.leaseUntil > now && entry.owner !== request.owner) {
      return Promise.resolve({ status: 'busy', owner: entry.owner, leaseRemainingMs: entry.leaseUntil - now });
    }
    const takeover = entry?.owner !== undefined && entry.owner !== request.owner;
    const fence = (entry?.fence ?? 0) + 1;
    this.entries.set(key, { owner: request.owner, fence, leaseUntil: now + Math.max(0, request.leaseMs) });
    return Promise.resolve({ status: 'acquired', token: { key, owner: request.owner, fence }, takeover });
  }

  complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult> {
    if (!this.owns(token)) return Promise.resolve(this.lost(token.key));
    return Promise.resolve({ status: 'ok', record: this.finish(token.key, token.fence, record) });
  }

  release(token: ClaimToken): Promise<FencedResult> {
    if (!this.owns(token)) return Promise.resolve(this.lost(token.key));
    const entry = this.entries.get(token.key);
    if (entry !== undefined) {
      delete entry.owner;
      entry.leaseUntil = 0;
    }
    return Promise.resolve({ status: 'ok' });
  }

  renew(token: ClaimToken, leaseMs: number): Promise<FencedResult> {
    if (!this.owns(token)) return Promise.resolve(this.lost(token.key));
    const entry = this.entries.get(token.key);
    if (entry !== undefined) entry.leaseUntil = this.now() + Math.max(0, leaseMs);
    return Promise.resolve({ status: 'ok' });
  }

  /** Deletes up to `limit` expired finished records; returns how many it deleted. */
  prune(limit = 1000): Promise<number> {
    const now = this.now();
    let deleted = 0;
    for (const [key, entry] of this.entries) {
      if (deleted >= limit) break;
      if (entry.record !== undefined && entry.expiresAt !== undefined && entry.expiresAt <= now) {
        this.entries.delete(key);
        deleted++;
      }
    }
    return Promise.resolve(deleted);
  }

  /** Finished records whose key starts with `prefix` (a run id, say), in key order. */
  list(prefix: string): Promise<EffectRecord[]> {
    const keys = [...this.entries.keys()].filter((k) => k.startsWith(prefix)).sort();
    return Promise.resolve(keys.map((k) => this.finished(k)).filter((r): r is EffectRecord => r !== undefined));
  }

  /** Nothing to release; present so every store can be closed alike. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  private finished(key: string): EffectRecord | undefined {
    const entry = this.entries.get(key);
    if (entry?.record === undefined) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) return undefined;
    return JSON.parse(entry.record) as EffectRecord;
  }

  private finish(key: string, fence: number, input: EffectRecordInput): EffectRecord {
    const now = this.now();
    const stored = toStoredRecord(key, input, now, this.retentionMs);
    const text = JSON.stringify(stored);
    this.entries.set(key, { fence, leaseUntil: 0, record: text, expiresAt: now + this.retentionMs });
    return JSON.parse(text) as EffectRecord;
  }

  private owns(token: ClaimToken): boolean {
    const entry = this.entries.get(token.key);
    return (
      entry !== undefined && entry.record === undefined && entry.owner === token.owner && entry.fence === token.fence
    );
  }

  private lost(key: string): FencedResult {
    const record = this.finished(key);
    return record === undefined ? { status: 'lost' } : { status: 'lost', record };
  }
}
