import type { ConversationEntry } from '../conversation/conversation-entry.js';
import { plantedEntry } from './conversation-chain.js';
import { ABANDONED_RUN_MS, type AppendConversationOptions, type ConversationStore } from './conversation-store.js';
import { checkedWriteOrder, isLatestWrite, type ConversationWriteOrder } from './conversation-write-order.js';
import { DEFAULT_RETENTION_MS } from './retention.js';

interface StoredEntry extends ConversationEntry {
  readonly runId: string;
}

/** One execution's hold on its run's entries, as its latest write left it. */
interface ExecutionState {
  readonly open: boolean;
  readonly touchedAt: number;
  readonly writtenBy?: ConversationWriteOrder;
}

/** Options of {@link MemoryConversationStore}. */
export interface MemoryConversationStoreOptions {
  /** How long a closed run's entries and a stored payload are kept, in ms. Default 30 days. */
  readonly retentionMs?: number;
  /** Clock in epoch ms (tests move it). Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Conversations and offloaded payloads in this process's memory: the memory effect store's, and
 * the fallback of workers whose effect store keeps no conversations (one worker process only:
 * another process cannot see them). Same semantics as the durable stores.
 */
export class MemoryConversationStore implements ConversationStore {
  /** Its conversations and payloads live in this process (see {@link ConversationStore.inProcessOnly}). */
  readonly inProcessOnly = true;
  private readonly entries = new Map<string, StoredEntry>();
  /** By run id, then by execution. */
  private readonly runs = new Map<string, Map<string, ExecutionState>>();
  private readonly payloads = new Map<string, { data: Uint8Array; expiresAt: number }>();
  private readonly now: () => number;
  private readonly retentionMs: number;

  constructor(options: MemoryConversationStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  }

  appendConversation(
    runId: string,
    entries: readonly ConversationEntry[],
    options: AppendConversationOptions = {},
  ): Promise<void> {
    // What the write throws (a planted key, a writtenBy out of range) rejects, writing nothing.
    return new Promise((resolve) => resolve(this.append(runId, entries, options)));
  }

  private append(runId: string, entries: readonly ConversationEntry[], options: AppendConversationOptions): void {
    const writtenBy = checkedWriteOrder(options.writtenBy);
    for (const entry of entries) {
      const stored = this.entries.get(entry.key);
      const same =
        stored === undefined ||
        (stored.parent === entry.parent && stored.json === entry.json && stored.runId === runId);
      if (!same) throw plantedEntry(runId, entry.key);
    }
    for (const entry of entries) {
      if (!this.entries.has(entry.key))
        this.entries.set(entry.key, { key: entry.key, parent: entry.parent, json: entry.json, runId });
    }
    const executions = this.runs.get(runId) ?? new Map<string, ExecutionState>();
    this.runs.set(runId, executions);
    const execution = options.execution ?? '';
    const now = this.now();
    const latest = executions.get(execution);
    if (isLatestWrite(writtenBy, latest?.writtenBy)) {
      const order = writtenBy ?? latest?.writtenBy;
      executions.set(execution, { open: options.close !== true, touchedAt: now, ...(order && { writtenBy: order }) });
    }
    const previous = options.previousExecution;
    const before = previous === undefined || previous === execution ? undefined : executions.get(previous);
    if (previous !== undefined && before?.open === true) {
      executions.set(previous, { ...before, open: false, touchedAt: now });
    }
  }

  loadConversation(head: string): Promise<ConversationEntry[] | undefined> {
    const chain: ConversationEntry[] = [];
    const visited = new Set<string>();
    for (let entry = this.entries.get(head); entry !== undefined && !visited.has(entry.key);) {
      visited.add(entry.key);
      chain.push({ key: entry.key, parent: entry.parent, json: entry.json });
      entry = this.entries.get(entry.parent);
    }
    return Promise.resolve(chain.length === 0 ? undefined : chain.reverse());
  }

  putPayload(key: string, data: Uint8Array): Promise<void> {
    const kept = this.payloads.get(key)?.data ?? Uint8Array.from(data);
    this.payloads.set(key, { data: kept, expiresAt: this.now() + this.retentionMs });
    return Promise.resolve();
  }

  getPayload(key: string): Promise<Uint8Array | undefined> {
    const found = this.payloads.get(key);
    if (found === undefined || found.expiresAt <= this.now()) return Promise.resolve(undefined);
    return Promise.resolve(Uint8Array.from(found.data));
  }

  /**
   * Deletes up to `limit` entries of runs every execution of which closed more than the retention
   * ago (or was abandoned, see `ABANDONED_RUN_MS`), those runs once they have no entries left, and
   * expired payloads; returns how many entries and payloads it deleted.
   */
  prune(limit: number): number {
    const now = this.now();
    const abandonedMs = Math.max(this.retentionMs, ABANDONED_RUN_MS);
    const gone = new Set<string>();
    for (const [runId, executions] of this.runs) {
      const released = [...executions.values()].every(
        (e) => now - e.touchedAt >= (e.open ? abandonedMs : this.retentionMs),
      );
      if (released) gone.add(runId);
    }
    let deleted = 0;
    for (const [key, entry] of this.entries) {
      if (deleted >= limit) break;
      if (gone.has(entry.runId)) {
        this.entries.delete(key);
        deleted++;
      }
    }
    const left = new Set([...this.entries.values()].map((e) => e.runId));
    for (const runId of gone) if (!left.has(runId)) this.runs.delete(runId);
    for (const [key, payload] of this.payloads) {
      if (deleted >= limit) break;
      if (payload.expiresAt <= now) {
        this.payloads.delete(key);
        deleted++;
      }
    }
    return deleted;
  }
}
