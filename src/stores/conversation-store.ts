import type { ConversationEntry } from '../conversation/conversation-entry.js';
import type { ConversationWriteOrder } from './conversation-write-order.js';

/** What {@link ConversationStore.appendConversation} is told about the run. @public */
export interface AppendConversationOptions {
  /**
   * The writing execution wrote its final step: it no longer holds the run's entries, which may be
   * pruned once every execution of the run let go of them (see {@link ConversationStore}). A later
   * write by the same execution (a retry of the step that answered with tool calls, the agent loop
   * run again) opens it again; an older one (see `writtenBy`) leaves it closed.
   */
  readonly close?: boolean;
  /**
   * The execution that writes: one Temporal workflow execution (`<workflowId>/<runId>` from the
   * activities), so that executions sharing a run id (a custom `runId`, the two branches of a
   * reset) each hold the run's entries until they close. Default `''`: one execution per run id.
   */
  readonly execution?: string;
  /**
   * Which write of the execution this is (the activity and attempt that write). Only the
   * execution's latest write so far decides whether it holds the run's entries: a write of an
   * older activity, or an older attempt of the same activity, adds its entries and leaves the
   * execution open or closed as it was. That is an attempt that outlived its start-to-close
   * timeout and stores its answer after the retry Temporal took: its final answer does not close
   * an execution that went on with the retry's tool calls, nor its tool calls reopen one the
   * retry closed. Default: the write counts as the execution's latest.
   *
   * @throws InvalidOptionError, writing nothing, when a number is not a whole number from 1 to 2^31-1.
   */
  readonly writtenBy?: ConversationWriteOrder;
  /**
   * An execution of the same run that this one continues (its continue-as-new, retry or cron
   * predecessor, finished by definition): the write closes it, as if its last write had closed.
   * An execution the store has no row of is left alone.
   */
  readonly previousExecution?: string;
}

/**
 * Optional capability of durable stores: the conversations of agent runs, as content-addressed
 * entries next to the effect records, so that activities pass a reference to the conversation
 * (the key of its last entry) instead of the whole conversation through Temporal's event history.
 * Also the payloads Temporal's External Storage offloads (see the worker's storage driver).
 *
 * Retention, per execution: every execution that wrote to a run holds the run's entries until it
 * closes (its latest write, by activity and attempt, was its final step); the entries go once
 * every execution of the run closed more than `retentionMs` ago, with the effect records. An
 * execution that never closes (it failed, was cancelled, terminated or reset away) lets go
 * {@link ABANDONED_RUN_MS} after its last write.
 * Payloads go `retentionMs` after they were last stored (storing the same payload again extends it).
 *
 * The store is not trusted with content: `ConversationLog` checks every entry it reads back
 * (hash and parent link), and appending refuses a key already stored with other content.
 * @public
 */
export interface ConversationStore {
  /**
   * Writes the entries of run `runId` the store does not have yet (an entry with the same key is
   * the same message after the same history: it is never rewritten), in one transaction, and
   * marks the writing execution open, or closed with `close` (and `previousExecution` closed),
   * unless the execution has a later write (`writtenBy`).
   *
   * @throws InvalidOptionError, writing nothing, for a `writtenBy` out of range.
   * @throws ConversationEntryCorruptError, writing nothing, when the store already holds one of
   *   the keys with another parent, message or run (a row planted or edited by someone else).
   */
  appendConversation(
    runId: string,
    entries: readonly ConversationEntry[],
    options?: AppendConversationOptions,
  ): Promise<void>;
  /**
   * The conversation ending at the entry `head`, oldest entry first, following each entry's
   * parent until one is not stored (the run's root) or was already visited (a cycle, which only a
   * store written by someone else has: the walk visits each stored entry at most once, so it ends
   * promptly). `undefined` when `head` itself is not stored. The caller checks the entries (see
   * `verifiedChain`): a pruned entry in the middle ends the chain early.
   */
  loadConversation(head: string): Promise<ConversationEntry[] | undefined>;
  /** Stores a payload under its content key, or extends the retention of the one already stored. */
  putPayload(key: string, data: Uint8Array): Promise<void>;
  /** The payload stored under `key`, or `undefined` (never stored, or pruned). */
  getPayload(key: string): Promise<Uint8Array | undefined>;
  /**
   * `true` when the store keeps conversations and payloads in this process's memory, so no other
   * worker process can read them (the memory stores): a worker then offloads no payloads to it.
   * Absent (or `false`) for a store every worker of the task queue shares.
   */
  readonly inProcessOnly?: boolean;
}

/**
 * How long an open execution whose final step was never written holds its run's entries after its
 * last write: one year. Such an execution failed, was cancelled, terminated or reset away (an open
 * execution that waits longer than this between two steps loses its conversation once no other
 * execution holds it; its next step fails with `ConversationEntryMissingError`).
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
