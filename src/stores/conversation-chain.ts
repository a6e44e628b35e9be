import type { ConversationEntry } from '../conversation/conversation-entry.js';
import { ConversationEntryCorruptError } from '../errors/errors.js';

/**
 * The conversation ending at `head`, oldest entry first, from the rows of a chain query in any
 * order (each entry at most once: the queries walk with `UNION`, which drops a row already
 * reached, so a cycle of parent links ends them). Follows parents from `head` until one is not
 * among the rows or was already visited; `undefined` when `head` is not among them.
 */
export function chainFromRows(head: string, rows: readonly unknown[]): ConversationEntry[] | undefined {
  const byKey = new Map<string, ConversationEntry>();
  for (const { key, parent, json } of rows as Array<{ key: string; parent: string; json: string }>) {
    byKey.set(key, { key, parent, json });
  }
  const chain: ConversationEntry[] = [];
  const visited = new Set<string>();
  for (let entry = byKey.get(head); entry !== undefined && !visited.has(entry.key); entry = byKey.get(entry.parent)) {
    visited.add(entry.key);
    chain.push(entry);
  }
  return chain.length === 0 ? undefined : chain.reverse();
}

/** What an append throws when the store holds `key` of run `runId` with another parent, message or run. */
export function plantedEntry(runId: string, key: string): ConversationEntryCorruptError {
  return new ConversationEntryCorruptError({
    runId,
    key,
    problem:
      'the store already holds this key with another parent, message or run id than the entry written under it (a row planted ahead of time, or edited)',
  });
}
