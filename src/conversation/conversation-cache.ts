import type { ConversationEntry } from './conversation-entry.js';

/** Default budget of a {@link ConversationCache}: 64 MiB of message JSON. */
export const DEFAULT_CONVERSATION_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * The conversation entries a worker process has seen, by key, least recently used dropped first
 * once their JSON exceeds the budget. Entries never change (the key is the hash of the content),
 * so a cached entry can never be stale: the cache only saves store reads, and a worker that loses
 * it (a new process) reads the store instead.
 */
export class ConversationCache {
  private readonly entries = new Map<string, ConversationEntry>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number = DEFAULT_CONVERSATION_CACHE_BYTES) {}

  get(key: string): ConversationEntry | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  add(entries: readonly ConversationEntry[]): void {
    for (const entry of entries) {
      if (this.entries.has(entry.key)) continue;
      this.entries.set(entry.key, entry);
      this.bytes += entry.json.length;
    }
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.entries.delete(key);
      this.bytes -= entry.json.length;
    }
  }

  /** The cached chain from the run's `root` to `head`, oldest first, or `undefined` when an entry of it is not cached. */
  chain(root: string, head: string): ConversationEntry[] | undefined {
    const chain: ConversationEntry[] = [];
    for (let key = head; key !== root;) {
      const entry = this.get(key);
      if (entry === undefined) return undefined;
      chain.push(entry);
      key = entry.parent;
    }
    return chain.reverse();
  }
}
