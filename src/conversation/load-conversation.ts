import type { ModelMessage } from 'ai';
import type { ConversationStore } from '../stores/conversation-store.js';
import { ConversationLog, messagesOf } from './conversation-log.js';

/** What {@link loadConversation} reads: an agent run's output or progress, or just its run id and conversation reference. @public */
export interface ConversationSource {
  /** The run id the conversation belongs to. */
  readonly runId: string;
  /** The key of the conversation's last stored entry, and the messages not stored yet. */
  readonly conversation: { readonly head?: string; readonly pending?: readonly unknown[] };
}

/**
 * The messages of an agent run's conversation, oldest first: the entries the run stored in the
 * workers' store up to its head, then the messages it had not stored yet (the last step's tool
 * results). Pass the run's output (`await handle.result()`) or its progress query's answer, and
 * the store the workers use. The messages are the AI SDK's `ModelMessage`s the run's model steps
 * wrote (every stored entry is checked against its hash and its run), so they can be passed as
 * they are to `generateText`/`streamText`, or as the `messages` of the run of the next turn.
 *
 * ```ts
 * const output = await handle.result();
 * for (const message of await loadConversation(store, output)) console.log(message.role, message.content);
 * ```
 *
 * @throws ConversationEntryMissingError when the store lacks an entry (another store, or pruned).
 * @throws ConversationEntryCorruptError when a stored entry is not what the run wrote (every entry is checked).
 * @public
 */
export async function loadConversation(store: ConversationStore, source: ConversationSource): Promise<ModelMessage[]> {
  const entries = await new ConversationLog(store).load(source.runId, source.conversation.head);
  return [...messagesOf(entries), ...(source.conversation.pending ?? [])] as ModelMessage[];
}
