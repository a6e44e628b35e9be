// Which conversation store a worker uses, and whether every worker process of its task queue
// reads the same one (activities/conversation-store-of.ts): the plugin offloads payloads (External
// Storage) only to a store they share.
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conversationStoreOf } from '../../activities/conversation-store-of.js';
import { MemoryConversationStore } from '../../src/stores/memory-conversation.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { FlakyEffectStore } from '../../testing/flaky-store.js';
import { PlainStore } from '../core/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'chamvi-conv-of-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a worker's conversation store", () => {
  it('is the memory store itself, not shared with other processes, also for a subclass or a wrapper of it', () => {
    class CountingStore extends MemoryEffectStore {}
    for (const store of [new MemoryEffectStore(), new CountingStore(), new FlakyEffectStore(new MemoryEffectStore())]) {
      const chosen = conversationStoreOf({ store });
      expect(chosen.store).toBe(store);
      expect(chosen.shared).toBe(false);
    }
  });

  it('is a durable store itself, shared by every worker that opens it', async () => {
    const store = new SqliteEffectStore({ path: join(dir, 'store.db') });
    expect(conversationStoreOf({ store })).toEqual({ store, shared: true });
    const wrapped = new FlakyEffectStore(store);
    expect(conversationStoreOf({ store: wrapped }).shared).toBe(true);
    await store.close();
  });

  it('is the conversation store given, whatever the effect store keeps', () => {
    const conversationStore = new MemoryConversationStore();
    expect(conversationStoreOf({ store: new MemoryEffectStore(), conversationStore }).store).toBe(conversationStore);
  });

  it('falls back to one in memory, per effect store, for a store that keeps no conversations', () => {
    const store = new PlainStore();
    const first = conversationStoreOf({ store });
    expect(first.store).toBeInstanceOf(MemoryConversationStore);
    expect(first.shared).toBe(false);
    expect(conversationStoreOf({ store }).store).toBe(first.store);
    expect(conversationStoreOf({ store: new PlainStore() }).store).not.toBe(first.store);
  });
});
