import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { chainEntries, conversationRoot, type ConversationEntry } from '../../src/conversation/conversation-entry.js';
import { ConversationEntryCorruptError, InvalidOptionError } from '../../src/errors/errors.js';
import { ConversationLog } from '../../src/conversation/conversation-log.js';
import type { AppendConversationOptions } from '../../src/stores/conversation-store.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import type { StoreHarness } from './conformance.js';

/** A store harness that can also write the store's tables the way someone with database access would. */
export interface ConversationStoreHarness extends StoreHarness {
  /**
   * Runs one SQL statement on `store`'s database, outside the store: `$conv` names its entries
   * table, `$runs` its table of 0.3 run rows, `$execs` its table of executions; `$now`, `$true` and `$false` are the database's clock
   * and booleans as the store keeps them. Absent for the memory store (nothing outside the process
   * can write it).
   */
  tamper?(store: ManagedEffectStore, statement: string): Promise<void>;
}

/** A load of `head` by a log whose cache is empty: what a worker that did not write the entries does. */
const loadUncached = (store: ManagedEffectStore, run: string, head: string) =>
  new ConversationLog(store).load(run, head);

/** The error `promise` rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)?.slice(0, 200)}`);
    },
    (error: unknown) => error,
  );
}

/** Expects `error` to be the named corruption error for entry `key` of run `run`. */
function expectCorrupt(error: unknown, run: string, key: string): void {
  expect(ConversationEntryCorruptError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ name: 'ConversationEntryCorruptError', runId: run, key, retryable: false });
  expect((error as Error).message).toContain(run);
  expect((error as Error).message).toContain(key);
}

const user = (text: string) => ({ role: 'user', content: text });
const assistant = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }] });

/** Lets the harness's clock pass beyond `ms` (real time for databases: a little more, their clock is another one). */
async function pass(harness: StoreHarness, ms: number): Promise<void> {
  await harness.advance(ms + 50);
}

/** The conversation entries and offloaded payloads every store this library ships must keep; run it once per store. */
export function conversationStoreConformance(harness: ConversationStoreHarness): void {
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

    it('a row planted ahead of time under an entry key fails the append that meets it, writing nothing, and every load', async () => {
      await fresh();
      const run = runId();
      const genuine = chainEntries(conversationRoot(run), [user('deploy to staging'), assistant('on it')]);
      const planted: ConversationEntry = { ...genuine[0]!, json: JSON.stringify(user('deploy to production')) };
      await store.appendConversation(run, [planted]);
      const log = new ConversationLog(store);
      expectCorrupt(await rejection(log.append(run, genuine, { execution: 'wf/1' })), run, genuine[0]!.key);
      // Nothing of the refused append was written, so no cache holds it either.
      expect(await store.loadConversation(genuine[1]!.key)).toBeUndefined();
      expectCorrupt(await rejection(log.load(run, genuine[0]!.key)), run, genuine[0]!.key);
      // The same key planted under another run id (which prune goes by) is refused too.
      const other = runId();
      const elsewhere = chainEntries(conversationRoot(run), [user('hi')]);
      await store.appendConversation(other, elsewhere);
      expectCorrupt(await rejection(store.appendConversation(run, elsewhere)), run, elsewhere[0]!.key);
      await store.close();
    });

    it('a cycle of parent links ends the walk at once: the load fails with ConversationEntryCorruptError', async () => {
      await fresh();
      const run = runId();
      // Written by a writer that lies about its keys: each entry names the other as its parent.
      const json = JSON.stringify(user('again'));
      const cycle: ConversationEntry[] = [
        { key: `a-${run}`, parent: `b-${run}`, json },
        { key: `b-${run}`, parent: `a-${run}`, json },
      ];
      await store.appendConversation(run, cycle);
      const started = Date.now();
      const walked = await store.loadConversation(cycle[0]!.key);
      expect(walked?.map((e) => e.key)).toEqual([cycle[1]!.key, cycle[0]!.key]);
      expectCorrupt(await rejection(loadUncached(store, run, cycle[0]!.key)), run, cycle[0]!.key);
      expect(Date.now() - started).toBeLessThan(2_000);
      await store.close();
    });

    it("two executions share a run id: one closes, and a prune past the retention keeps the open one's entries", async () => {
      const retentionMs = 300;
      await fresh({ retentionMs });
      const run = runId();
      const root = conversationRoot(run);
      // Two workflows given the same run id (a run id per issue), each with its own prompt.
      const first = chainEntries(root, [user('issue 7: first report'), assistant('fixed')]);
      const second = chainEntries(root, [user('issue 7: second report')]);
      await store.appendConversation(run, first.slice(0, 1), { execution: 'issue-7-a/r1' });
      await store.appendConversation(run, second, { execution: 'issue-7-b/r1' });
      await store.appendConversation(run, first.slice(1), { execution: 'issue-7-a/r1', close: true });
      await pass(harness, retentionMs);
      expect(await store.prune(Infinity)).toBe(0);
      expect(await loadUncached(store, run, second[0]!.key)).toEqual(second);
      expect(await loadUncached(store, run, first[1]!.key)).toEqual(first);
      // Once the second closes too, a retention later the run goes.
      await store.appendConversation(run, [], { execution: 'issue-7-b/r1', close: true });
      await pass(harness, retentionMs);
      expect(await store.prune(Infinity)).toBe(3);
      expect(await store.loadConversation(second[0]!.key)).toBeUndefined();
      await store.close();
    });

    it("a reset's old branch closing late lets go of its own hold only; continue-as-new hands the hold on", async () => {
      const retentionMs = 300;
      await fresh({ retentionMs });
      const [reset, continued] = [runId(), runId()];
      const trunk = chainEntries(conversationRoot(reset), [user('deploy'), assistant('step 1')]);
      await store.appendConversation(reset, trunk, { execution: 'wf/old' });
      // The reset's new branch goes on from the prompt; the old branch's last step lands late and closes.
      const branch = chainEntries(trunk[0]!.key, [assistant('step 1, again')]);
      await store.appendConversation(reset, branch, { execution: 'wf/new' });
      await store.appendConversation(reset, chainEntries(trunk[1]!.key, [assistant('done')]), {
        execution: 'wf/old',
        close: true,
      });
      // A run that continued as new twice, the last execution closing: nothing holds it after.
      const chain = chainEntries(conversationRoot(continued), [user('a'), assistant('b'), user('c'), assistant('d')]);
      await store.appendConversation(continued, chain.slice(0, 2), { execution: 'cw/1' });
      await store.appendConversation(continued, chain.slice(2, 3), { execution: 'cw/2', previousExecution: 'cw/1' });
      await store.appendConversation(continued, chain.slice(3), {
        execution: 'cw/3',
        previousExecution: 'cw/2',
        close: true,
      });
      await pass(harness, retentionMs);
      expect(await store.prune(Infinity)).toBe(4);
      expect(await loadUncached(store, reset, branch[0]!.key)).toEqual([trunk[0], branch[0]]);
      expect(await store.loadConversation(chain[3]!.key)).toBeUndefined();
      await store.close();
    });

    // Step 0 of execution wf/r1 is its activity 1. Attempt 1 outlives its start-to-close timeout;
    // Temporal takes attempt 2, which answers with a tool call (the run goes on, then waits for an
    // approval); attempt 1's final answer lands after it, as a close.
    const zombieHistory = (run: string) => {
      const prompt = chainEntries(conversationRoot(run), [user('deploy to staging')]);
      return {
        prompt,
        taken: chainEntries(prompt[0]!.key, [assistant('calling deploy')]),
        zombie: chainEntries(prompt[0]!.key, [assistant('done, nothing to deploy')]),
      };
    };

    it("a zombie attempt's final answer stored after the retry's write leaves the execution open: a prune past the retention keeps its entries", async () => {
      const retentionMs = 300;
      await fresh({ retentionMs });
      const run = runId();
      const { prompt, taken, zombie } = zombieHistory(run);
      const execution = 'wf/r1';
      await store.appendConversation(run, [...prompt, ...taken], { execution, writtenBy: { activity: 1, attempt: 2 } });
      await store.appendConversation(run, zombie, { execution, writtenBy: { activity: 1, attempt: 1 }, close: true });
      await pass(harness, retentionMs);
      expect(await store.prune(Infinity)).toBe(0);
      expect(await loadUncached(store, run, taken[0]!.key)).toEqual([...prompt, ...taken]);
      // Step 1 (activity 3, after the tool call's) ends the run; attempt 1 of step 0 writing again
      // (its tool calls, say) no longer opens it: a retention later everything goes.
      const last = chainEntries(taken[0]!.key, [assistant('deployed')]);
      await store.appendConversation(run, last, { execution, writtenBy: { activity: 3, attempt: 1 }, close: true });
      const late = chainEntries(prompt[0]!.key, [assistant('calling deploy twice')]);
      await store.appendConversation(run, late, { execution, writtenBy: { activity: 1, attempt: 1 } });
      await pass(harness, retentionMs);
      expect(await store.prune(Infinity)).toBe(5);
      expect(await store.loadConversation(last[0]!.key)).toBeUndefined();
      await store.close();
    });

    it('the latest write of an execution decides, by activity then attempt: a retry of the closing step opens it again, a write without an order counts as the latest', async () => {
      const retentionMs = 300;
      await fresh({ retentionMs });
      const run = runId();
      const { prompt, taken, zombie } = zombieHistory(run);
      const execution = 'wf/r1';
      // Attempt 1 closes, but its completion is lost: attempt 2 answers with a tool call, and is taken.
      await store.appendConversation(run, [...prompt, ...zombie], {
        execution,
        writtenBy: { activity: 1, attempt: 1 },
        close: true,
      });
      await store.appendConversation(run, taken, { execution, writtenBy: { activity: 1, attempt: 2 } });
      // The same write again (an append retried inside its attempt) changes nothing.
      await store.appendConversation(run, taken, { execution, writtenBy: { activity: 1, attempt: 2 } });
      await pass(harness, retentionMs);
      expect(await store.prune(Infinity)).toBe(0);
      await store.appendConversation(run, [], { execution, close: true });
      await pass(harness, retentionMs);
      expect(await store.prune(Infinity)).toBe(3);
      await store.close();
    });

    it('refuses a writtenBy that is not two whole numbers from 1 to 2^31-1 with InvalidOptionError, writing nothing', async () => {
      await fresh();
      const run = runId();
      const entries = chainEntries(conversationRoot(run), [user('hi')]);
      const bad: unknown[] = [
        { activity: 0, attempt: 1 },
        { activity: 1, attempt: 1.5 },
        { activity: Number.NaN, attempt: 1 },
        { activity: 2 ** 31, attempt: 1 },
        { activity: '3', attempt: 1 },
        { activity: 1 },
        null,
      ];
      for (const writtenBy of bad) {
        const error = await rejection(
          store.appendConversation(run, entries, { execution: 'wf/r1', writtenBy } as AppendConversationOptions),
        );
        expect(InvalidOptionError.isInstance(error)).toBe(true);
        expect((error as Error).message).toContain('writtenBy');
      }
      expect(await store.loadConversation(entries[0]!.key)).toBeUndefined();
      await store.close();
    });

    if (harness.tamper !== undefined) {
      const tamper = harness.tamper.bind(harness);

      it('a user message edited with SQL in the entries table fails an uncached load with ConversationEntryCorruptError, never returning the forged text', async () => {
        await fresh();
        const run = runId();
        const entries = chainEntries(conversationRoot(run), [user('hi'), assistant('hello'), user('more')]);
        const writer = new ConversationLog(store);
        await writer.append(run, entries);
        const edited = entries[0]!.key;
        await tamper(store, `UPDATE $conv SET json = replace(json, '"hi"', '"FORGED"') WHERE key = '${edited}'`);
        expect(JSON.stringify(await store.loadConversation(entries[2]!.key))).toContain('FORGED');
        const error = await rejection(loadUncached(store, run, entries[2]!.key));
        expectCorrupt(error, run, edited);
        expect((error as Error).message).not.toContain('FORGED');
        // The worker that wrote the entries keeps what it wrote: never the forged text either.
        expect(await writer.load(run, entries[2]!.key)).toEqual(entries);
        // A parent link edited to skip an entry fails the same way, naming the entry edited.
        const again = runId();
        const chain = chainEntries(conversationRoot(again), [user('a'), assistant('b'), user('c')]);
        await store.appendConversation(again, chain);
        await tamper(store, `UPDATE $conv SET parent = '${chain[0]!.key}' WHERE key = '${chain[2]!.key}'`);
        expectCorrupt(await rejection(loadUncached(store, again, chain[2]!.key)), again, chain[2]!.key);
        await store.close();
      });

      it('a cycle planted with SQL: the load fails with ConversationEntryCorruptError within 2 s, and the store keeps answering', async () => {
        await fresh();
        const run = runId();
        const entries = chainEntries(conversationRoot(run), [user('hi'), assistant('hello'), user('more')]);
        await store.appendConversation(run, entries);
        const head = entries[2]!.key;
        await tamper(store, `UPDATE $conv SET parent = '${head}' WHERE key = '${entries[0]!.key}'`);
        const started = Date.now();
        expect((await store.loadConversation(head))?.map((e) => e.key)).toEqual(entries.map((e) => e.key));
        expectCorrupt(await rejection(loadUncached(store, run, head)), run, entries[0]!.key);
        expect(Date.now() - started).toBeLessThan(2_000);
        const later = chainEntries(conversationRoot(runId()), [user('next')]);
        await store.appendConversation('next', later);
        expect(await store.loadConversation(later[0]!.key)).toEqual(later);
        await store.close();
      });

      it('a run row of 0.3 (one per run id) still holds its run: open, it is never pruned; closed, it goes a retention later', async () => {
        const retentionMs = 300;
        await fresh({ retentionMs });
        const run = runId();
        const entries = chainEntries(conversationRoot(run), [user('begun on 0.3'), assistant('ok')]);
        await store.appendConversation(run, entries, { execution: 'wf/r1', close: true });
        await tamper(store, `INSERT INTO $runs (run_id, open, touched_at) VALUES ('${run}', $true, $now)`);
        await pass(harness, retentionMs);
        expect(await store.prune(Infinity)).toBe(0);
        expect(await loadUncached(store, run, entries[1]!.key)).toEqual(entries);
        await tamper(store, `UPDATE $runs SET open = $false, touched_at = $now WHERE run_id = '${run}'`);
        await pass(harness, retentionMs);
        expect(await store.prune(Infinity)).toBe(2);
        await store.close();
      });

      it('an execution table without the order of its writes gains it when a store opens it: a zombie close after the retry then leaves the execution open', async () => {
        const retentionMs = 300;
        await fresh({ retentionMs });
        const run = runId();
        const { prompt, taken, zombie } = zombieHistory(run);
        await store.appendConversation(run, prompt, { execution: 'wf/r1' });
        await tamper(store, 'ALTER TABLE $execs DROP COLUMN attempt');
        await tamper(store, 'ALTER TABLE $execs DROP COLUMN activity');
        const upgraded = await harness.sibling(store);
        await store.close();
        // The row written before the upgrade has no order: the next write counts as the latest.
        await upgraded.appendConversation(run, taken, { execution: 'wf/r1', writtenBy: { activity: 1, attempt: 2 } });
        await upgraded.appendConversation(run, zombie, {
          execution: 'wf/r1',
          writtenBy: { activity: 1, attempt: 1 },
          close: true,
        });
        await pass(harness, retentionMs);
        expect(await upgraded.prune(Infinity)).toBe(0);
        expect(await loadUncached(upgraded, run, taken[0]!.key)).toEqual([...prompt, ...taken]);
        await upgraded.close();
      });

      it('a database of 0.3, without the execution table, gains it when a store opens it, its entries readable as they were', async () => {
        await fresh();
        const run = runId();
        const entries = chainEntries(conversationRoot(run), [user('begun on 0.3'), assistant('ok')]);
        await store.appendConversation(run, entries.slice(0, 1));
        await tamper(store, 'DROP TABLE $execs');
        await tamper(store, `INSERT INTO $runs (run_id, open, touched_at) VALUES ('${run}', $true, $now)`);
        const upgraded = await harness.sibling(store);
        await store.close();
        await upgraded.appendConversation(run, entries, { execution: 'wf/r1', close: true });
        expect(await loadUncached(upgraded, run, entries[1]!.key)).toEqual(entries);
        await upgraded.close();
      });
    }
  });
}
