import type { ConversationEntry } from '../conversation/conversation-entry.js';
import type { AppendConversationOptions, ConversationStore } from './conversation-store.js';
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
import { MemoryConversationStore } from './memory-conversation.js';
import { DEFAULT_RETENTION_MS, type RetentionOptions } from './retention.js';
import { checkStorable, checkStorableFields } from './storage-key.js';
import { checkClaimRequest, checkLease, checkPruneLimit, msOption, RETENTION_RANGE } from './store-options.js';

interface Entry {
  owner?: string;
  fence: number;
  /** When the lease ends or ended (a released claim: when it was released), epoch ms. */
  leaseUntil: number;
  record?: Finished;
}

/**
 * A finished record as kept: the result as JSON text, so every read gets a fresh copy and JSON
 * semantics match the durable stores; the full record (ISO dates, parsed result) is built on read.
 */
interface Finished {
  readonly toolName: string;
  readonly origin: EffectRecord['origin'];
  readonly recordedAt: string | number;
  readonly expiresAt: number;
  /**
   * `undefined` when the result is `undefined` or JSON has no text for it (a function, a symbol):
   * recorded as `resultUndefined`, exactly as the SQL stores record it.
   */
  readonly resultJson: string | undefined;
  readonly runId: string | undefined;
  readonly attempt: number | undefined;
  readonly fingerprint: string | undefined;
  readonly unserializable: string | undefined;
}

/** Options of {@link MemoryEffectStore}. @public */
export interface MemoryEffectStoreOptions extends RetentionOptions {
  /** Clock in epoch ms (tests move it). Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * An effect store in this process's memory, with claims. For tests and single-process runs:
 * everything is lost when the process exits, so it cannot close the crash window across worker
 * processes. Records are kept as JSON, exactly like the durable stores keep them; so are run
 * conversations and offloaded payloads ({@link ConversationStore}).
 * @public
 */
export class MemoryEffectStore implements IEffectStore, EffectClaims, ConversationStore {
  /** Its conversations and payloads live in this process (see {@link ConversationStore.inProcessOnly}). */
  readonly inProcessOnly = true;
  private readonly entries = new Map<string, Entry>();
  private readonly conversations: MemoryConversationStore;
  private readonly now: () => number;
  private readonly retentionMs: number;

  constructor(options: MemoryEffectStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.retentionMs = msOption(
      'MemoryEffectStore',
      'retentionMs',
      options.retentionMs,
      DEFAULT_RETENTION_MS,
      RETENTION_RANGE,
    );
    this.conversations = new MemoryConversationStore({ now: this.now, retentionMs: this.retentionMs });
  }

  /** {@inheritDoc ConversationStore.appendConversation} */
  appendConversation(
    runId: string,
    entries: readonly ConversationEntry[],
    options?: AppendConversationOptions,
  ): Promise<void> {
    return this.conversations.appendConversation(runId, entries, options);
  }

  /** {@inheritDoc ConversationStore.loadConversation} */
  loadConversation(head: string): Promise<ConversationEntry[] | undefined> {
    return this.conversations.loadConversation(head);
  }

  /** {@inheritDoc ConversationStore.putPayload} */
  putPayload(key: string, data: Uint8Array): Promise<void> {
    return this.conversations.putPayload(key, data);
  }

  /** {@inheritDoc ConversationStore.getPayload} */
  getPayload(key: string): Promise<Uint8Array | undefined> {
    return this.conversations.getPayload(key);
  }

  /** The finished record for `key`, or `undefined` (also when it has expired). */
  get(key: string): Promise<EffectRecord | undefined> {
    return settle(() => {
      checkStorable(key);
      return this.finished(key);
    });
  }

  /** First writer wins: writes the record unless one is already finished; returns the stored one. */
  put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    return settle(() => {
      checkStorableFields(key, record);
      return this.finished(key) ?? this.finish(key, this.entries.get(key)?.fence ?? 0, record);
    });
  }

  /** {@inheritDoc EffectClaims.claim} */
  claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    return settle((): ClaimResult => {
      const leaseMs = checkClaimRequest(key, request);
      checkStorableFields(key, request);
      const now = this.now();
      const done = this.finished(key);
      if (done !== undefined) return { status: 'done', record: done };
      const entry = this.entries.get(key);
      if (entry?.owner !== undefined && entry.leaseUntil > now && entry.owner !== request.owner) {
        return { status: 'busy', owner: entry.owner, leaseRemainingMs: entry.leaseUntil - now };
      }
      const takeover = entry?.owner !== undefined && entry.owner !== request.owner;
      const fence = (entry?.fence ?? 0) + 1;
      this.entries.set(key, { owner: request.owner, fence, leaseUntil: now + leaseMs });
      return { status: 'acquired', token: { key, owner: request.owner, fence }, takeover };
    });
  }

  /** {@inheritDoc EffectClaims.complete} */
  complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult> {
    return settle((): FencedResult => {
      checkStorableFields(token.key, { ...record, owner: token.owner });
      if (!this.owns(token)) return this.lost(token.key);
      return { status: 'ok', record: this.finish(token.key, token.fence, record) };
    });
  }

  /** {@inheritDoc EffectClaims.release} */
  release(token: ClaimToken): Promise<FencedResult> {
    return settle((): FencedResult => {
      checkStorableFields(token.key, token);
      if (!this.owns(token)) return this.lost(token.key);
      const entry = this.entries.get(token.key);
      if (entry !== undefined) {
        delete entry.owner;
        entry.leaseUntil = this.now(); // prune measures the claim's age from here
      }
      return { status: 'ok' };
    });
  }

  /** {@inheritDoc EffectClaims.renew} */
  renew(token: ClaimToken, leaseMs: number): Promise<FencedResult> {
    return settle((): FencedResult => {
      const lease = checkLease(token.key, leaseMs);
      checkStorableFields(token.key, token);
      if (!this.owns(token)) return this.lost(token.key);
      const entry = this.entries.get(token.key);
      if (entry !== undefined) entry.leaseUntil = this.now() + lease;
      return { status: 'ok' };
    });
  }

  /**
   * Deletes up to `limit` (default 1000) expired finished records and abandoned claims (lease
   * ended more than `retentionMs` ago), then the conversations of runs closed more than
   * `retentionMs` ago and expired payloads; returns how many it deleted. See
   * `ManagedEffectStore.prune` for why a claim is kept that long.
   */
  prune(limit = 1000): Promise<number> {
    return settle(() => {
      const max = checkPruneLimit(limit);
      const deleted = this.pruneNow(max);
      return deleted + this.conversations.prune(max - deleted);
    });
  }

  private pruneNow(limit: number): number {
    const now = this.now();
    let deleted = 0;
    for (const [key, entry] of this.entries) {
      if (deleted >= limit) break;
      const expired =
        entry.record !== undefined ? entry.record.expiresAt <= now : entry.leaseUntil + this.retentionMs <= now;
      if (expired) {
        this.entries.delete(key);
        deleted++;
      }
    }
    return deleted;
  }

  /** Finished records whose key starts with `prefix` (a run id, say), in key order. */
  list(prefix: string): Promise<EffectRecord[]> {
    return settle(() => {
      checkStorable(prefix, 'prefix');
      const keys = [...this.entries.keys()].filter((k) => k.startsWith(prefix)).sort();
      return keys.map((k) => this.finished(k)).filter((r): r is EffectRecord => r !== undefined);
    });
  }

  /** Nothing to release; present so every store can be closed alike. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  private finished(key: string): EffectRecord | undefined {
    const done = this.entries.get(key)?.record;
    if (done === undefined || done.expiresAt <= this.now()) return undefined;
    return toRecord(key, done);
  }

  private finish(key: string, fence: number, input: EffectRecordInput): EffectRecord {
    const now = this.now();
    const done: Finished = {
      toolName: input.toolName,
      origin: input.origin,
      recordedAt: input.recordedAt ?? now,
      expiresAt: now + this.retentionMs,
      // JSON.stringify gives undefined (its typings say string) for a function or a symbol.
      resultJson:
        input.result === undefined || input.unserializable !== undefined ? undefined : JSON.stringify(input.result),
      unserializable: input.unserializable,
      runId: input.runId,
      attempt: input.attempt,
      fingerprint: input.fingerprint,
    };
    this.entries.set(key, { fence, leaseUntil: 0, record: done });
    return toRecord(key, done);
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

/** The record as every store returns it: fields in a fixed order, ISO dates, a fresh copy of the result. */
function toRecord(key: string, done: Finished): EffectRecord {
  const record: Record<string, unknown> = {
    key,
    toolName: done.toolName,
    origin: done.origin,
    recordedAt: typeof done.recordedAt === 'string' ? done.recordedAt : new Date(done.recordedAt).toISOString(),
    expiresAt: new Date(done.expiresAt).toISOString(),
  };
  if (done.resultJson === undefined) record['resultUndefined'] = true;
  else record['result'] = JSON.parse(done.resultJson);
  if (done.runId !== undefined) record['runId'] = done.runId;
  if (done.attempt !== undefined) record['attempt'] = done.attempt;
  if (done.fingerprint !== undefined) record['fingerprint'] = done.fingerprint;
  if (done.unserializable !== undefined) record['unserializable'] = done.unserializable;
  return record as unknown as EffectRecord;
}

// The methods answer with promises, never synchronous throws, so a caller's .catch sees every refusal.
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
