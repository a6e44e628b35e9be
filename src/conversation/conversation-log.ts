import { ConversationEntryMissingError } from '../errors/errors.js';
import type { ConversationStore } from '../stores/conversation-store.js';
import { ConversationCache } from './conversation-cache.js';
import { conversationRoot, type ConversationEntry } from './conversation-entry.js';

/**
 * The conversations of agent runs as one worker process reads and writes them: entries go to the
 * shared store and stay in this process's cache, so the steps and tool calls of a run that this
 * worker ran last read nothing from the store; another worker (or this one after a restart) reads
 * the chain in one query.
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
   */
  async load(runId: string, head: string | undefined): Promise<ConversationEntry[]> {
    if (head === undefined) return [];
    const root = conversationRoot(runId);
    const cached = this.cache.chain(root, head);
    if (cached !== undefined) return cached;
    const loaded = await this.store.loadConversation(head);
    const first = loaded?.[0];
    if (loaded === undefined || first === undefined || first.parent !== root) {
      throw new ConversationEntryMissingError(runId, loaded === undefined ? head : (first?.parent ?? head));
    }
    this.cache.add(loaded);
    return loaded;
  }

  /** Writes `entries` of run `runId` (those the store has are left as they are) and keeps them in the cache. */
  async append(runId: string, entries: readonly ConversationEntry[], close = false): Promise<void> {
    await this.store.appendConversation(runId, entries, close ? { close: true } : {});
    this.cache.add(entries);
  }
}

/** The messages of `entries`, parsed (fresh objects on every call: a caller may change them). */
export function messagesOf(entries: readonly ConversationEntry[]): unknown[] {
  return entries.map((entry) => JSON.parse(entry.json) as unknown);
}
