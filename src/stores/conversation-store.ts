import type { ConversationEntry } from '../conversation/conversation-entry.js';

/** What {@link ConversationStore.appendConversation} is told about the run. */
export interface AppendConversationOptions {
  /**
   * The run wrote its final step: its entries may be pruned once the store's retention has passed
   * since. A later write for the run (a reset to an earlier point) opens it again.
   */
  readonly close?: boolean;
}

/**
 * Optional capability of durable stores: the conversations of agent runs, as content-addressed
 * entries next to the effect records, so that activities pass a reference to the conversation
 * (the key of its last entry) instead of the whole conversation through Temporal's event history.
 * Also the payloads Temporal's External Storage offloads (see the worker's storage driver).
 *
 * Retention: a run's entries are never pruned while the run is open; once it closed (its final
 * step was written) they go `retentionMs` after its last write, with the effect records. A run
 * that never closes (it failed, was cancelled or terminated) counts as abandoned
 * {@link ABANDONED_RUN_MS} after its last write. Payloads go `retentionMs` after they were last
 * stored (storing the same payload again extends it).
 */
export interface ConversationStore {
  /**
   * Writes the entries of run `runId` the store does not have yet (an entry with the same key is
   * the same message after the same history: it is never rewritten), in one transaction, and
   * marks the run open, or closed with `close`.
   */
  appendConversation(
    runId: string,
    entries: readonly ConversationEntry[],
    options?: AppendConversationOptions,
  ): Promise<void>;
  /**
   * The conversation ending at the entry `head`, oldest entry first, following each entry's
   * parent until one has no stored parent (the run's root). `undefined` when `head` itself is not
   * stored. The caller checks that the first entry's parent is the run's root: a pruned entry in
   * the middle ends the chain early.
   */
  loadConversation(head: string): Promise<ConversationEntry[] | undefined>;
  /** Stores a payload under its content key, or extends the retention of the one already stored. */
  putPayload(key: string, data: Uint8Array): Promise<void>;
  /** The payload stored under `key`, or `undefined` (never stored, or pruned). */
  getPayload(key: string): Promise<Uint8Array | undefined>;
}

/**
 * How long an open run whose final step was never written keeps its entries after its last
 * write: one year. Such a run failed, was cancelled or terminated (an open run that waits longer
 * than this between two steps loses its conversation; its next step fails with
 * `ConversationEntryMissingError`).
 */
export const ABANDONED_RUN_MS = 365 * 24 * 60 * 60 * 1000;

/** Whether a store implements {@link ConversationStore}. */
export function hasConversationStore<T extends object>(store: T): store is T & ConversationStore {
  const s = store as Partial<ConversationStore>;
  return (
    typeof s.appendConversation === 'function' &&
    typeof s.loadConversation === 'function' &&
    typeof s.putPayload === 'function' &&
    typeof s.getPayload === 'function'
  );
}
