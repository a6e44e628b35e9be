import { ConversationEntryCorruptError, ConversationEntryMissingError } from '../errors/errors.js';
import { conversationEntryKey, conversationRoot, type ConversationEntry } from './conversation-entry.js';

/**
 * The entries a store answered for run `runId`'s conversation ending at `head`, checked as the
 * run wrote them: the last one is `head`, every entry's key is the hash of its parent and message
 * ({@link conversationEntryKey}), each entry's parent is the entry before it, no key comes twice,
 * and the first entry's parent is the run's root. The store is not trusted: whoever can write to
 * its tables can make a run fail here, never change the history the model is sent.
 *
 * Returns fresh entry objects (only `key`, `parent`, `json`), oldest first.
 *
 * @throws ConversationEntryCorruptError for an entry that fails a check (named by its stored key).
 * @throws ConversationEntryMissingError when the chain ends before the run's root (an entry was
 *   pruned, or the workers use different stores).
 */
export function verifiedChain(
  runId: string,
  head: string,
  loaded: readonly ConversationEntry[] | undefined,
): ConversationEntry[] {
  if (loaded === undefined || loaded.length === 0) throw new ConversationEntryMissingError({ runId, key: head });
  const corrupt = (key: unknown, problem: string) =>
    new ConversationEntryCorruptError({ runId, key: typeof key === 'string' ? key : head, problem });
  const chain: ConversationEntry[] = [];
  const seen = new Set<string>();
  let expected = head;
  for (let i = loaded.length - 1; i >= 0; i--) {
    const entry = loaded[i];
    const { key, parent, json } = (entry ?? {}) as Partial<ConversationEntry>;
    if (typeof key !== 'string' || typeof parent !== 'string' || typeof json !== 'string') {
      throw corrupt(key, 'the store answered an entry without a string key, parent and message');
    }
    if (key !== expected) {
      throw corrupt(
        key,
        i === loaded.length - 1
          ? `the store answered a conversation ending at ${key}, not at the head ${head} it was asked for`
          : `the entry after it names ${expected} as its parent, not ${key}`,
      );
    }
    if (seen.has(key)) throw corrupt(key, 'the parent links run in a cycle');
    seen.add(key);
    if (conversationEntryKey(parent, json) !== key) {
      throw corrupt(key, 'its key is not the hash of its parent and message: the stored message or parent was changed');
    }
    chain.push({ key, parent, json });
    expected = parent;
  }
  if (seen.has(expected)) throw corrupt(expected, 'the parent links run in a cycle');
  if (expected !== conversationRoot(runId)) throw new ConversationEntryMissingError({ runId, key: expected });
  return chain.reverse();
}
