import { hasConversationStore, type ConversationStore } from '../src/stores/conversation-store.js';
import type { IEffectStore } from '../src/stores/effect-store.js';
import { MemoryConversationStore } from '../src/stores/memory-conversation.js';

/** Where a worker keeps run conversations, and whether other worker processes see them. */
export interface WorkerConversationStore {
  readonly store: ConversationStore;
  /** `false` for the fallback in this process's memory: no other process can read it. */
  readonly shared: boolean;
}

const fallbacks = new WeakMap<object, MemoryConversationStore>();

/**
 * The conversation store of a worker: the one given, else the effect store when it keeps
 * conversations (every store this library ships does), else (a custom `IEffectStore` with only
 * `get` and `put`, a wrapper that hides the rest) one in this process's memory, the same for every
 * activity of that effect store. A run then works on one worker process only: give such workers a
 * `conversationStore` that they share.
 */
export function conversationStoreOf(options: {
  readonly store: IEffectStore;
  readonly conversationStore?: ConversationStore;
}): WorkerConversationStore {
  if (options.conversationStore !== undefined) return { store: options.conversationStore, shared: true };
  if (hasConversationStore(options.store))
    return { store: options.store, shared: options.store.inProcessOnly !== true };
  let fallback = fallbacks.get(options.store);
  if (fallback === undefined) fallbacks.set(options.store, (fallback = new MemoryConversationStore()));
  return { store: fallback, shared: false };
}
