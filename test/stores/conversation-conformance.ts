import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { chainEntries, conversationRoot } from '../../src/index.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import type { StoreHarness } from './conformance.js';

const user = (text: string) => ({ role: 'user', content: text });
const assistant = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }] });

/** Lets the harness's clock pass beyond `ms` (real time for databases: a little more, their clock is another one). */
async function pass(harness: StoreHarness, ms: number): Promise<void> {
  await harness.advance(ms + 50);
}

/** The conversation entries and offloaded payloads every store this library ships must keep; run it once per store. */
export function conversationStoreConformance(harness: StoreHarness): void {
  describe(`${harness.name} conversation store conformance`, () => {
    let store: ManagedEffectStore;
    const fresh = async (options?: { retentionMs?: number }) => (store = await harness.create(options));
    const runId = () => `run-${randomUUID()}`;

    it('loads a conversation from its head, oldest message first, across handles on the same data', async () => {
      await fresh();
      const run = runId();
      const entries = chainEntries(conversationRoot(run), [user('hi'), assistant('hello'), user('more')]);
      await store.appendConversation(run, entries);
      const head = entries[2]!.key;
      expect(await store.loadConversation(head)).toEqual(entries);
      const other = await harness.sibling(store);
      expect((await other.loadConversation(head))?.map((e) => JSON.parse(e.json) as unknown)).toEqual([
        user('hi'),
        assistant('hello'),
        user('more'),
      ]);
      if (other !== store) await other.close();
      await store.close();
    });

    it('writes an entry once: appending it again, or a branch that shares its history, leaves it as it was', async () => {
      await fresh();
      const run = runId();
      const root = conversationRoot(run);
      const trunk = chainEntries(root, [user('hi'), assistant('first answer')]);
      await store.appendConversation(run, trunk);
      await store.appendConversation(run, trunk);
      // A retried step that answered differently: a branch from the same prompt entry.
      const branch = chainEntries(trunk[0]!.key, [assistant('second answer')]);
      await store.appendConversation(run, branch);
      expect(branch[0]!.key).not.toBe(trunk[1]!.key);
      expect(await store.loadConversation(trunk[1]!.key)).toEqual(trunk);
      expect(await store.loadConversation(branch[0]!.key)).toEqual([trunk[0], branch[0]]);
      await store.close();
    });

    it('answers undefined for a head it never stored, and the same messages of two runs are two conversations', async () => {
      await fresh();
      expect(await store.loadConversation('no-such-entry')).toBeUndefined();
      const [a, b] = [runId(), runId()];
      const ofA = chainEntries(conversationRoot(a), [user('same prompt')]);
      const ofB = chainEntries(conversationRoot(b), [user('same prompt')]);
      expect(ofA[0]!.key).not.toBe(ofB[0]!.key);
      await store.appendConversation(a, ofA);
      expect(await store.loadConversation(ofB[0]!.key)).toBeUndefined();
      await store.close();
    });

    it('keeps payloads by key, byte for byte, and answers undefined for one it never stored', async () => {
      await fresh();
      const data = Uint8Array.from({ length: 70_000 }, (_, i) => i % 251);
      await store.putPayload('p1', data);
      await store.putPayload('p1', data);
      expect(Buffer.from((await store.getPayload('p1'))!)).toEqual(Buffer.from(data));
      expect(await store.getPayload('p2')).toBeUndefined();
      await store.close();
    });

    it('prunes a closed run one retention after its last write, never an open one, and expired payloads', async () => {
      const retentionMs = 300;
      await fresh({ retentionMs });
      const [open, closed, reopened] = [runId(), runId(), runId()];
      const chains = Object.fromEntries(
        [open, closed, reopened].map((run) => [run, chainEntries(conversationRoot(run), [user(run), assistant('ok')])]),
      );
      await store.appendConversation(open, chains[open]!);
      await store.appendConversation(closed, chains[closed]!, { close: true });
      await store.appendConversation(reopened, chains[reopened]!, { close: true });
      await store.putPayload('old', Uint8Array.of(1, 2, 3));
      await pass(harness, retentionMs);
      // A reset to an earlier point of a closed run writes again: the run is open again.
      await store.appendConversation(reopened, chains[reopened]!.slice(0, 1));
      await store.putPayload('new', Uint8Array.of(4));
      const deleted = await store.prune(Infinity);
      expect(deleted).toBe(3); // the closed run's two entries and the old payload
      expect(await store.loadConversation(chains[closed]![1]!.key)).toBeUndefined();
      expect(await store.loadConversation(chains[open]![1]!.key)).toEqual(chains[open]);
      expect(await store.loadConversation(chains[reopened]![1]!.key)).toEqual(chains[reopened]);
      expect(await store.getPayload('old')).toBeUndefined();
      expect(await store.getPayload('new')).toEqual(Uint8Array.of(4));
      await store.close();
    });
  });
}
