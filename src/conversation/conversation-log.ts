import type { AppendConversationOptions, ConversationStore } from '../stores/conversation-store.js';
import { ConversationCache } from './conversation-cache.js';
import { conversationRoot, type ConversationEntry } from './conversation-entry.js';
import { verifiedChain } from './verify-chain.js';

/**
 * The conversations of agent runs as one worker process reads and writes them: entries go to the
 * shared store and stay in this process's cache, so the steps and tool calls of a run that this
 * worker ran last read nothing from the store; another worker (or this one after a restart) reads
 * the chain in one query and checks every entry of it (see {@link verifiedChain}) before it uses
 * or caches any. The cache holds only entries this process wrote or checked, so a cached chain and
 * a chain read from the store are the same history, or the read fails.
 */
export class ConversationLog {
  constructor(
    readonly store: ConversationStore,
    private readonly cache: ConversationCache = new ConversationCache(),
  ) {}

  /**
   * The entries of run `runId` from its first message to `head`, oldest first; none for `head`
   * `undefined` (a conversation not begun).
   *
   * @throws ConversationEntryMissingError when the store lacks `head` or one of its ancestors
   *   (pruned, or the workers use different stores).
   * @throws ConversationEntryCorruptError when an entry the store answers is not what the run
   *   wrote (its hash, its parent link, a cycle).
   */
  async load(runId: string, head: string | undefined): Promise<ConversationEntry[]> {
    if (head === undefined) return [];
    const cached = this.cache.chain(conversationRoot(runId), head);
    if (cached !== undefined) return cached;
    const entries = verifiedChain(runId, head, await this.store.loadConversation(head));
    this.cache.add(entries);
    return entries;
  }

  /**
   * Writes `entries` of run `runId` (those the store has are left as they are, once it checked
   * they hold the same) and keeps them in the cache. `options` as the store takes them: whether the
   * write closes the run, the execution that writes and which of its writes this is (a boolean is
   * `close`).
   *
   * @throws ConversationEntryCorruptError when the store already holds one of the keys with
   *   another message, parent or run.
   * @throws InvalidOptionError for a `writtenBy` out of range (nothing is written).
   */
  async append(
    runId: string,
    entries: readonly ConversationEntry[],
    options: AppendConversationOptions | boolean = {},
  ): Promise<void> {
    await this.store.appendConversation(runId, entries, typeof options === 'boolean' ? { close: options } : options);
    this.cache.add(entries);
  }
}

/** The messages of `entries`, parsed (fresh objects on every call: a caller may change them). */
export function messagesOf(entries: readonly ConversationEntry[]): unknown[] {
  return entries.map((entry) => JSON.parse(entry.json) as unknown);
}
