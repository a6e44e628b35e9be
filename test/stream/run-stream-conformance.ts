import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { InvalidEffectStoreSpecError, RunStreamClosedError } from '../../src/errors/errors.js';
import { readRunStream } from '../../src/stream/read-run-stream.js';
import type {
  RunStreamBatch,
  RunStreamKey,
  RunStreamStore,
  RunStreamWriterRef,
} from '../../src/stream/run-stream-store.js';

/** Options a harness passes on to its store as given, valid or not. */
export type StreamStoreOptions = Record<string, unknown>;

/** How the conformance suite gets run stream stores of one implementation. */
export interface RunStreamHarness {
  readonly name: string;
  /** A fresh, empty store (its own file or table unless `options.table` names one). */
  create(options?: StreamStoreOptions): RunStreamStore;
  /** Another store object on the same data (another connection: as another process would read it); memory: the same object. */
  sibling(store: RunStreamStore): RunStreamStore;
  /** The option that paces a waiting reader, with its smallest accepted value. */
  readonly poll?: { readonly name: 'pollMs' | 'safetyPollMs'; readonly min: number };
  /** Whether the store takes a `table` option. */
  readonly tables: boolean;
  /** Called once after the suite. */
  cleanup?(): Promise<void>;
}

/** Values no ms option may take: each means "at once", "never" or "not a number of ms" somewhere. */
const BAD_MS: readonly unknown[] = [NaN, Infinity, -Infinity, -1, 0, 1.5, '100', null];

const key = (
  runId: string = randomUUID(),
  workflowId = `wf-${randomUUID()}`,
  first: string = randomUUID(),
): RunStreamKey => ({
  runId,
  workflowId,
  firstExecutionRunId: first,
});
const ref = (k: RunStreamKey, attempt = 1, step = 0, execution = k.firstExecutionRunId): RunStreamWriterRef => ({
  ...k,
  step,
  attempt,
  execution,
});
const text = (delta: string) => [{ type: 'text-delta' as const, id: 't', delta }];
const deltas = (batches: readonly RunStreamBatch[]): string[] =>
  batches.flatMap((b) => b.parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Follows `k` on `store` until `count` batches came (or 5 s passed); the batches in the order they came. */
function follow(store: RunStreamStore, k: RunStreamKey, count: number, from = 0): Promise<RunStreamBatch[]> {
  const stop = AbortSignal.timeout(5000);
  return (async () => {
    const seen: RunStreamBatch[] = [];
    for await (const batch of readRunStream({ store, ...k, from, signal: stop, checkEveryMs: 50 })) {
      seen.push(batch);
      if (seen.length === count) break;
    }
    return seen;
  })();
}

/** The behaviour every run stream store must show; run it once per store. */
export function runStreamStoreConformance(harness: RunStreamHarness): void {
  describe(`${harness.name} run stream store conformance`, () => {
    const opened: RunStreamStore[] = [];
    const fresh = (options?: StreamStoreOptions): RunStreamStore => {
      const store = harness.create(options);
      opened.push(store);
      return store;
    };
    const sibling = (store: RunStreamStore): RunStreamStore => {
      const other = harness.sibling(store);
      if (other !== store) opened.push(other);
      return other;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });
    afterAll(async () => {
      await harness.cleanup?.();
    });

    it('numbers the batches of a stream 1, 2, 3 and reads exactly those after a cursor, with what each carried', async () => {
      const store = fresh();
      const [k, other] = [key(), key()];
      for (let i = 0; i < 5; i++) {
        expect(await store.append(ref(k, 1, i), text(`${i} `))).toBe(i + 1);
        await store.append(ref(other), text('x'));
      }
      const all = await store.read(k, 0);
      expect(all.map((b) => b.cursor)).toEqual([1, 2, 3, 4, 5]);
      expect(all[2]).toEqual({ ...ref(k, 1, 2), cursor: 3, parts: text('2 ') });
      expect(deltas(await store.read(k, 3))).toEqual(['3 ', '4 ']);
      expect((await store.read(k, 0, 2)).map((b) => b.cursor)).toEqual([1, 2]);
      expect(await store.read(key(), 0)).toEqual([]);
    });

    it('keeps cursors gap-free in commit order when two writers of a stream append at once (a zombie beside its retry)', async () => {
      const store = fresh();
      const k = key();
      const writers = [store, sibling(store)];
      const cursors = await Promise.all(
        Array.from({ length: 40 }, (_, i) => writers[i % 2]!.append(ref(k, 1 + (i % 2)), text(String(i)))),
      );
      expect([...cursors].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      const read = await store.read(k, 0);
      expect(read.map((b) => b.cursor)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      // Each batch sits at the cursor its append returned.
      for (const batch of read) expect(cursors[Number(deltas([batch])[0])]).toBe(batch.cursor);
    });

    it("gives back each batch's execution, step and attempt as written when executions of a stream interleave (a reset's old branch beside the new one)", async () => {
      const store = fresh();
      const k = key();
      // The page asks Temporal about each batch's execution: it must come back exactly as the writer named it.
      const [old, reset] = [k.firstExecutionRunId, randomUUID()];
      const written: RunStreamWriterRef[] = [
        ref(k, 1, 0, reset),
        ref(k, 1, 0, old),
        ref(k, 2, 0, reset),
        ref(k, 1, 1, old),
        ref(k, 2, 0, reset),
      ];
      const other = sibling(store);
      for (const [i, r] of written.entries()) await (i % 2 === 0 ? store : other).append(r, text(String(i)));
      const read = await other.read(k, 0);
      expect(read).toEqual(written.map((r, i) => ({ ...r, cursor: i + 1, parts: text(String(i)) })));
    });

    it('keys streams by run id, workflow id and first execution run id: a stream shows none of another that shares its run id', async () => {
      const store = fresh();
      const own = key('shared-run');
      const otherWorkflow = key('shared-run'); // a second workflow given the same custom run id
      const newRun = key('shared-run', own.workflowId); // the workflow id started again for a new run
      for (let i = 0; i < 3; i++) {
        await store.append(ref(own), text(`own ${i}`));
        await store.append(ref(otherWorkflow), text('other workflow'));
        await store.append(ref(newRun), text('new run'));
      }
      const read = await sibling(store).read(own, 0);
      expect(read.map((b) => b.cursor)).toEqual([1, 2, 3]);
      expect(deltas(read)).toEqual(['own 0', 'own 1', 'own 2']);
      expect(deltas(await store.read(newRun, 0))).toEqual(['new run', 'new run', 'new run']);
      // The other streams' batches are no batch of this one to wait for.
      const started = performance.now();
      await store.waitForAppend(own, 3, AbortSignal.timeout(150));
      expect(performance.now() - started).toBeGreaterThan(140);
    });

    it('delivers every batch of a stream to a following reader once and in order, while other streams of the run id are written', async () => {
      const store = fresh();
      const own = key('busy-run');
      const other = key('busy-run');
      const reading = follow(sibling(store), own, 60);
      await sleep(20);
      const writers = [store, sibling(store)];
      for (let round = 0; round < 20; round++) {
        await Promise.all([
          writers[0]!.append(ref(own, 1), text(`a${round}`)),
          writers[1]!.append(ref(own, 2), text(`b${round}`)),
          writers[round % 2]!.append(ref(other), text('other')),
        ]);
        await store.append(ref(own, 3), text(`c${round}`));
      }
      const seen = await reading;
      expect(seen.map((b) => b.cursor)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      expect(deltas(seen)).toEqual(deltas(await store.read(own, 0)));
      expect(deltas(seen).filter((d) => d === 'other')).toEqual([]);
    }, 15_000);

    it('wakes a waiting reader on an append, and at once when the stream already has a batch after its cursor', async () => {
      const store = fresh();
      const k = key();
      await store.append(ref(k), text('a'));
      await store.waitForAppend(k, 0); // at once: cursor 1 is there
      const waiting = sibling(store).waitForAppend(k, 1);
      await sleep(100);
      const appended = performance.now();
      await store.append(ref(k), text('b'));
      await waiting;
      expect(performance.now() - appended).toBeLessThan(1000);
    });

    it('gives cursors that only grow: once every batch of a stream is pruned, the next batch follows the last cursor and a follower sees it', async () => {
      const store = fresh({ retentionMs: 50 });
      const k = key();
      for (const d of ['a', 'b', 'c']) await store.append(ref(k), text(d));
      await sleep(120);
      expect(await store.prune()).toBeGreaterThanOrEqual(3);
      expect(await store.read(k, 0)).toEqual([]);
      // A page that showed up to cursor 3 follows on (live, or resuming with from: 3).
      const following = follow(sibling(store), k, 1, 3);
      await sleep(50);
      expect(await store.append(ref(k, 1, 1), text('after the prune'))).toBe(4);
      const seen = await following;
      expect(seen.map((b) => [b.cursor, deltas([b])[0]])).toEqual([[4, 'after the prune']]);
      expect((await store.read(k, 0)).map((b) => b.cursor)).toEqual([4]);
    }, 10_000);

    it('releases every waiting reader within 10 ms of close, then refuses every call with RunStreamClosedError', async () => {
      // Polls a minute apart: only the close can release the readers in time.
      const store = fresh(harness.poll === undefined ? {} : { [harness.poll.name]: 60_000 });
      const k = key();
      await store.append(ref(k), text('a'));
      const settled = (p: Promise<unknown>) =>
        p.then(
          () => ({ at: performance.now(), error: undefined as unknown }),
          (error: unknown) => ({ at: performance.now(), error }),
        );
      // Bare waits and followers (which read again when woken), on this stream and on one with nothing yet.
      const waits = [settled(store.waitForAppend(k, 1)), settled(store.waitForAppend(key(), 0))];
      const followers = [settled(follow(store, k, 2)), settled(follow(store, key(), 1))];
      await sleep(200); // every reader at its wait
      const closing = performance.now();
      const closed = store.close();
      const released = await Promise.all([...waits, ...followers]);
      await closed;
      const latency = released.map((r) => r.at - closing);
      // The waits themselves within 10 ms; a follower also reads once more (refused) and ends.
      expect(Math.max(...latency.slice(0, 2))).toBeLessThan(10);
      expect(Math.max(...latency.slice(2))).toBeLessThan(50);
      for (const wait of released.slice(0, 2)) expect(wait.error).toBeUndefined();
      for (const follower of released.slice(2)) expect(RunStreamClosedError.isInstance(follower.error)).toBe(true);
      const refusals = await Promise.all(
        [
          () => store.append(ref(k), text('b')),
          () => store.read(k, 0),
          () => store.waitForAppend(k, 0),
          () => store.prune(),
        ].map((call) => settled(call())),
      );
      for (const { error } of refusals) expect(RunStreamClosedError.isInstance(error)).toBe(true);
      await store.close(); // again: nothing to do, no error
    });

    describe('options', () => {
      const refused = (options: StreamStoreOptions): unknown => {
        try {
          fresh(options);
        } catch (error) {
          return error;
        }
        return undefined;
      };

      it.each(BAD_MS)('refuses retentionMs %p at construction, naming the option and its range', (value) => {
        const error = refused({ retentionMs: value });
        expect(InvalidEffectStoreSpecError.isInstance(error)).toBe(true);
        expect((error as Error).message).toMatch(/option retentionMs is .*from 1 to 3155760000000/);
      });

      it('takes retentionMs from 1 ms to 100 years', () => {
        for (const retentionMs of [1, 3_155_760_000_000]) expect(() => fresh({ retentionMs })).not.toThrow();
      });

      if (harness.poll !== undefined) {
        const { name, min } = harness.poll;
        it.each([...BAD_MS, min - 1])(
          `refuses ${name} %p at construction, naming the option and its range`,
          (value) => {
            const error = refused({ [name]: value });
            expect(InvalidEffectStoreSpecError.isInstance(error)).toBe(true);
            expect((error as Error).message).toMatch(new RegExp(`option ${name} is .*from ${min} to 2147483647`));
          },
        );

        it(`takes ${name} from ${min} ms to 2^31 - 1 ms`, () => {
          for (const value of [min, 2_147_483_647]) expect(() => fresh({ [name]: value })).not.toThrow();
        });
      }

      if (harness.tables) {
        it('refuses a table name past 55 characters (PostgreSQL names and pg_notify channels end at 63 bytes), or not an identifier', () => {
          for (const table of ['t'.repeat(56), 't'.repeat(70), '1table', 'my-table', 'a"b', '']) {
            const error = refused({ table });
            expect(InvalidEffectStoreSpecError.isInstance(error)).toBe(true);
            expect((error as Error).message).toMatch(/option table is .*1 to 55 characters/);
          }
        });

        it('works with a table name of 55 characters: append, wake and read', async () => {
          const table = `t${randomUUID().replace(/-/g, '').slice(0, 12)}`.padEnd(55, '_');
          const store = fresh({ table });
          const k = key();
          await store.append(ref(k), text('a'));
          const waiting = store.waitForAppend(k, 1);
          await sleep(50);
          await sibling(store).append(ref(k), text('b'));
          await waiting;
          expect(deltas(await store.read(k, 0))).toEqual(['a', 'b']);
        });
      }
    });
  });
}
