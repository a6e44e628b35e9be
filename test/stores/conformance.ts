import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import type { EffectRecordInput } from '../../src/index.js';
import {
  EffectKeyNotStorableError,
  InvalidClaimRequestError,
  InvalidEffectStoreSpecError,
} from '../../src/errors/errors.js';
import type { ClaimRequest, ClaimToken } from '../../src/stores/effect-store.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import { MAX_LEASE_MS, MAX_RETENTION_MS } from '../../src/stores/store-options.js';

/** How the conformance suite gets stores and lets time pass for one store implementation. */
export interface StoreHarness {
  readonly name: string;
  /** A fresh, empty store. `retentionMs` sets its record retention (passed on as given, even when invalid). */
  create(options?: { retentionMs?: number }): Promise<ManagedEffectStore>;
  /** Another handle (connection, process-local instance) on the same data as `store`, same retention. */
  sibling(store: ManagedEffectStore): Promise<ManagedEffectStore>;
  /** Lets `ms` pass on the store's clock (real time for databases, an injected clock for memory). */
  advance(ms: number): Promise<void>;
  /** Called once after the suite. */
  cleanup?(): Promise<void>;
}

const LEASE = 60_000;
/** Lease and retention values no store may accept: each would mean "never expires" or "already expired" somewhere. */
const BAD_MS: readonly unknown[] = [NaN, Infinity, -Infinity, -1, 1.5, '100', null];
/** Lease short enough to wait out in a test on a real clock, ms. */
const SHORT = 40;

const request = (owner: string, leaseMs = LEASE): ClaimRequest => ({
  owner,
  leaseMs,
  toolName: 'comment',
  runId: 'run-1',
  attempt: 1,
  fingerprint: 'f'.repeat(64),
});

const input = (result: unknown, extra: Partial<EffectRecordInput> = {}): EffectRecordInput => ({
  toolName: 'comment',
  result,
  origin: 'executed',
  runId: 'run-1',
  attempt: 2,
  fingerprint: 'a'.repeat(64),
  ...extra,
});

async function acquire(store: ManagedEffectStore, key: string, owner: string, leaseMs = LEASE): Promise<ClaimToken> {
  const claimed = await store.claim(key, request(owner, leaseMs));
  if (claimed.status !== 'acquired') throw new Error(`expected to acquire ${key}, got ${claimed.status}`);
  return claimed.token;
}

/** The behaviour every effect store with claims must show; run it once per store. */
export function effectStoreConformance(harness: StoreHarness): void {
  describe(`${harness.name} effect store conformance`, () => {
    const opened: ManagedEffectStore[] = [];
    const fresh = async (options?: { retentionMs?: number }): Promise<ManagedEffectStore> => {
      const store = await harness.create(options);
      opened.push(store);
      return store;
    };
    const sibling = async (store: ManagedEffectStore): Promise<ManagedEffectStore> => {
      const other = await harness.sibling(store);
      opened.push(other);
      return other;
    };
    // Closed after each test, not at the end: a suite's worth of open pools would crowd a shared server.
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });
    afterAll(async () => {
      await harness.cleanup?.();
    });

    it('reads nothing for an unknown key and keeps origin, attempt, fingerprint, runId and times of a put', async () => {
      const store = await fresh({ retentionMs: 3_600_000 });
      expect(await store.get('k')).toBeUndefined();
      const before = Date.now();
      const written = await store.put('k', input({ id: 7 }));
      expect(written).toMatchObject({ key: 'k', toolName: 'comment', result: { id: 7 }, origin: 'executed' });
      expect(written).toMatchObject({ runId: 'run-1', attempt: 2, fingerprint: 'a'.repeat(64) });
      expect(Math.abs(Date.parse(written.recordedAt) - before)).toBeLessThan(5_000);
      expect(Date.parse(written.expiresAt ?? '') - Date.parse(written.recordedAt)).toBeGreaterThan(3_590_000);
      expect(await store.get('k')).toEqual(written);
    });

    it('a record written without run id, attempt or fingerprint has no such fields, not null ones', async () => {
      const store = await fresh();
      const bare = { toolName: 'comment', result: 1, origin: 'executed' } as const;
      const put = await store.put('p', bare);
      const claimed = await store.claim('c', { owner: 'A', leaseMs: LEASE, toolName: 'comment' });
      if (claimed.status !== 'acquired') throw new Error(`expected to acquire c, got ${claimed.status}`);
      const completed = await store.complete(claimed.token, bare);
      for (const record of [put, completed.record, await store.get('p'), await store.get('c')]) {
        expect(record).toBeDefined();
        expect(Object.keys(record ?? {}).filter((k) => ['runId', 'attempt', 'fingerprint'].includes(k))).toEqual([]);
      }
    });

    it('put is first-writer-wins and returns the stored winner', async () => {
      const store = await fresh();
      const first = await store.put('k', input('first'));
      const second = await store.put('k', input('second', { origin: 'reconciled' }));
      expect(second).toEqual(first);
      expect((await store.get('k'))?.result).toBe('first');
    });

    it('put finishes a key with an open claim, and the claimant then loses and learns that record', async () => {
      const store = await fresh();
      const token = await acquire(store, 'k', 'A');
      const put = await store.put('k', input('written by the record activity'));
      expect(put.result).toBe('written by the record activity');
      const completed = await store.complete(token, input('late'));
      expect(completed).toEqual({ status: 'lost', record: put });
    });

    it('a claim race of 50 concurrent callers has exactly one winner', async () => {
      const store = await fresh();
      const handles = [store, ...(await Promise.all([1, 2, 3, 4].map(() => sibling(store))))];
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => handles[i % handles.length]!.claim('race', request(`owner-${i}`))),
      );
      const winners = results.filter((r) => r.status === 'acquired');
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => r.status === 'busy')).toHaveLength(49);
      const winner = winners[0]!;
      if (winner.status !== 'acquired') throw new Error('unreachable');
      for (const r of results) if (r.status === 'busy') expect(r.owner).toBe(winner.token.owner);
    });

    it('a live lease of another owner answers busy with the remaining lease', async () => {
      const store = await fresh();
      await acquire(store, 'k', 'A', 30_000);
      const answer = await store.claim('k', request('B'));
      expect(answer.status).toBe('busy');
      if (answer.status !== 'busy') return;
      expect(answer.owner).toBe('A');
      expect(answer.leaseRemainingMs).toBeGreaterThan(25_000);
      expect(answer.leaseRemainingMs).toBeLessThanOrEqual(30_000);
    });

    it('a claim of a finished key answers done with its record', async () => {
      const store = await fresh();
      const record = await store.put('k', input(1));
      expect(await store.claim('k', request('B'))).toEqual({ status: 'done', record });
    });

    it('takeover after expiry increments the fence and reports the takeover', async () => {
      const store = await fresh();
      const first = await acquire(store, 'k', 'A', SHORT);
      await harness.advance(SHORT * 2);
      const second = await store.claim('k', request('B'));
      expect(second).toMatchObject({ status: 'acquired', takeover: true });
      if (second.status !== 'acquired') return;
      expect(second.token.fence).toBeGreaterThan(first.fence);
    });

    it('the owner of a live claim claims the key again: acquired with a higher fence, no takeover', async () => {
      const store = await fresh();
      const first = await acquire(store, 'k', 'A');
      const again = await store.claim('k', request('A'));
      expect(again).toMatchObject({ status: 'acquired', takeover: false });
      if (again.status !== 'acquired') return;
      expect(again.token.fence).toBeGreaterThan(first.fence);
    });

    it('a claim after a put ended a claim and its record expired gets a fence above the ended claim', async () => {
      // Fences only grow: a strategy that hands the fence to a remote (a CAS, a fence header) relies on it.
      const store = await fresh({ retentionMs: 400 });
      const ended = await acquire(store, 'k', 'A');
      await store.put('k', input('by put'));
      await harness.advance(600);
      const next = await acquire(store, 'k', 'B');
      expect(next.fence).toBeGreaterThan(ended.fence);
    });

    it("a stale owner's complete changes nothing and returns the winner's record", async () => {
      const store = await fresh();
      const stale = await acquire(store, 'k', 'A', SHORT);
      await harness.advance(SHORT * 2);
      const fresher = await acquire(store, 'k', 'B');
      const winner = await store.complete(fresher, input('B wins'));
      expect(winner.status).toBe('ok');
      const late = await store.complete(stale, input('A too late'));
      expect(late).toEqual({ status: 'lost', record: winner.record });
      expect((await store.get('k'))?.result).toBe('B wins');
    });

    it("a stale owner's complete while the new owner still works changes nothing and learns no record", async () => {
      const store = await fresh();
      const stale = await acquire(store, 'k', 'A', SHORT);
      await harness.advance(SHORT * 2);
      const fresher = await acquire(store, 'k', 'B');
      expect(await store.complete(stale, input('A too late'))).toStrictEqual({ status: 'lost' });
      expect(await store.get('k')).toBeUndefined();
      expect((await store.complete(fresher, input('B'))).status).toBe('ok');
    });

    it("a stale owner's release and renew change nothing and learn the winner's record", async () => {
      const store = await fresh();
      const stale = await acquire(store, 'k', 'A', SHORT);
      await harness.advance(SHORT * 2);
      const fresher = await acquire(store, 'k', 'B');
      expect(await store.renew(stale, LEASE)).toStrictEqual({ status: 'lost' });
      expect(await store.release(stale)).toStrictEqual({ status: 'lost' });
      expect((await store.claim('k', request('C'))).status).toBe('busy');
      const done = await store.complete(fresher, input('B'));
      expect(await store.renew(stale, LEASE)).toEqual({ status: 'lost', record: done.record });
      expect(await store.release(stale)).toEqual({ status: 'lost', record: done.record });
      expect(await store.get('k')).toEqual(done.record);
    });

    it('a forged token with the right owner but another fence is refused', async () => {
      const store = await fresh();
      const token = await acquire(store, 'k', 'A');
      expect(await store.renew({ ...token, fence: token.fence + 1 }, LEASE)).toStrictEqual({ status: 'lost' });
      expect(await store.complete({ ...token, owner: 'B' }, input(1))).toStrictEqual({ status: 'lost' });
    });

    it('complete works on an expired lease when nobody took over', async () => {
      const store = await fresh();
      const token = await acquire(store, 'k', 'A', SHORT);
      await harness.advance(SHORT * 2);
      const done = await store.complete(token, input('slow but alone'));
      expect(done.status).toBe('ok');
      expect(done.record?.result).toBe('slow but alone');
    });

    it('release lets another owner claim at once, and renew keeps a lease alive', async () => {
      const store = await fresh();
      const token = await acquire(store, 'k', 'A');
      expect(await store.release(token)).toEqual({ status: 'ok' });
      const b = await store.claim('k', request('B', SHORT * 2));
      expect(b).toMatchObject({ status: 'acquired', takeover: false });
      if (b.status !== 'acquired') return;
      expect(b.token.fence).toBeGreaterThan(token.fence);
      await harness.advance(SHORT);
      expect(await store.renew(b.token, LEASE)).toEqual({ status: 'ok' });
      await harness.advance(SHORT * 2);
      expect((await store.claim('k', request('C'))).status).toBe('busy');
    });

    it('a lease of 0 still expires', async () => {
      const store = await fresh();
      const token = await acquire(store, 'k', 'A', 0);
      await harness.advance(2);
      const taken = await store.claim('k', request('B'));
      expect(taken).toMatchObject({ status: 'acquired', takeover: true });
      expect(await store.renew(token, LEASE)).toStrictEqual({ status: 'lost' });
    });

    it('expiry is checked at read: an expired record reads as absent and its key can be claimed again', async () => {
      // Long enough that the first read cannot come after the expiry on a loaded machine.
      const store = await fresh({ retentionMs: 400 });
      await store.put('k', input('old'));
      expect((await store.get('k'))?.result).toBe('old');
      await harness.advance(600);
      expect(await store.get('k')).toBeUndefined();
      expect(await store.list('')).toEqual([]);
      expect((await store.claim('k', request('B'))).status).toBe('acquired');
      expect((await store.put('k', input('new'))).result).toBe('new');
    });

    it.each([...BAD_MS, 0, MAX_RETENTION_MS + 1])(
      'a retentionMs of %p is refused when the store is created, naming the option and the range',
      async (retentionMs) => {
        const creating = harness.create({ retentionMs: retentionMs as number });
        await expect(creating).rejects.toThrow(InvalidEffectStoreSpecError);
        await expect(harness.create({ retentionMs: retentionMs as number })).rejects.toThrow(
          /retentionMs is .*; use a whole number of milliseconds from 1 to 3155760000000/,
        );
      },
    );

    it.each([...BAD_MS, undefined, MAX_LEASE_MS + 1])(
      'a claim asking for leaseMs %p is refused before anything is written',
      async (leaseMs) => {
        const store = await fresh();
        const bad = store.claim('k', { ...request('A'), leaseMs: leaseMs as number });
        await expect(bad).rejects.toThrow(InvalidClaimRequestError);
        await expect(store.claim('k', { ...request('A'), leaseMs: leaseMs as number })).rejects.toThrow(
          /asked for leaseMs .*; use a whole number of milliseconds from 0 to 2147483647\. Nothing was written\./,
        );
        // Nothing was written: another owner gets the key as a fresh claim, not as a takeover.
        const fresher = await store.claim('k', request('B'));
        expect(fresher).toMatchObject({ status: 'acquired', takeover: false, token: { fence: 1 } });
      },
    );

    it.each([...BAD_MS, MAX_LEASE_MS + 1])(
      'a renewal asking for leaseMs %p is refused and leaves the live lease as it was',
      async (leaseMs) => {
        const store = await fresh();
        const token = await acquire(store, 'k', 'A');
        await expect(store.renew(token, leaseMs as number)).rejects.toThrow(InvalidClaimRequestError);
        const other = await store.claim('k', request('B'));
        expect(other).toMatchObject({ status: 'busy', owner: 'A' });
        if (other.status === 'busy') expect(other.leaseRemainingMs).toBeGreaterThan(LEASE - 10_000);
      },
    );

    it('a claim without an owner token is refused before anything is written', async () => {
      const store = await fresh();
      await expect(store.claim('k', { ...request('A'), owner: '' })).rejects.toThrow(
        /owner token must be a non-empty string/,
      );
      expect(await store.claim('k', request('B'))).toMatchObject({ status: 'acquired', takeover: false });
    });

    it('the longest lease is accepted', async () => {
      const store = await fresh();
      const token = await acquire(store, 'k', 'A', MAX_LEASE_MS);
      expect(await store.renew(token, MAX_LEASE_MS)).toEqual({ status: 'ok' });
      const other = await store.claim('k', request('B'));
      expect(other).toMatchObject({ status: 'busy', owner: 'A' });
    });

    it.each([NaN, -1, 1.5, '10'])('prune(%p) is refused', async (limit) => {
      const store = await fresh();
      await expect(store.prune(limit as number)).rejects.toThrow(InvalidEffectStoreSpecError);
    });

    it('prune deletes only expired finished records, in bounded batches', async () => {
      // Retention long enough that "fresh" cannot expire before the checks on a loaded machine.
      const store = await fresh({ retentionMs: 600 });
      for (let i = 0; i < 5; i++) await store.put(`old-${i}`, input(i));
      await harness.advance(800);
      await store.put('fresh', input('fresh'));
      expect(await store.prune(2)).toBe(2);
      expect(await store.prune(10)).toBe(3);
      expect(await store.prune()).toBe(0);
      expect((await store.get('fresh'))?.result).toBe('fresh');
    });

    it('prune removes abandoned claims once their lease ended more than the retention ago, never a live or recently ended one', async () => {
      const retentionMs = 1_500;
      const store = await fresh({ retentionMs });
      const live = await acquire(store, 'live', 'A'); // 60 s lease: live throughout
      await acquire(store, 'abandoned', 'A', 0); // expired at once, never finished
      await store.release(await acquire(store, 'released', 'A')); // given back after a failed attempt
      await harness.advance(retentionMs + 500);
      const recent = await acquire(store, 'recent', 'A', 0); // expired, but only just
      await store.release(await acquire(store, 'recently-released', 'A'));
      expect(await store.prune()).toBe(2);
      expect(await store.prune()).toBe(0);
      // The live claim is untouched: still busy, and its owner still completes it.
      expect(await store.claim('live', request('B'))).toMatchObject({ status: 'busy', owner: 'A' });
      // Recently ended claims are kept, so a takeover still raises their fence.
      const taken = await store.claim('recent', request('B'));
      expect(taken).toMatchObject({ status: 'acquired', takeover: true });
      if (taken.status === 'acquired') expect(taken.token.fence).toBe(recent.fence + 1);
      expect(await store.claim('recently-released', request('B'))).toMatchObject({ token: { fence: 2 } });
      // The pruned ones are gone: a new claim starts over, as on a key never seen.
      for (const key of ['abandoned', 'released']) {
        expect(await store.claim(key, request('B'))).toMatchObject({
          status: 'acquired',
          takeover: false,
          token: { fence: 1 },
        });
      }
      expect((await store.complete(live, input('done'))).status).toBe('ok');
    });

    it('a record marked unserializable keeps the reason beside the record and has no result', async () => {
      const store = await fresh();
      const mark = { unserializable: 'BigInt at $.n cannot be serialised' };
      const put = await store.put('put', input(undefined, mark));
      const token = await acquire(store, 'complete', 'A');
      const completed = await store.complete(token, input({ ignored: true }, mark));
      for (const record of [put, completed.record, await store.get('put'), await store.get('complete')]) {
        expect(record).toMatchObject({ ...mark, resultUndefined: true });
        expect(record !== undefined && 'result' in record).toBe(false);
      }
      expect(await store.claim('put', request('B'))).toEqual({ status: 'done', record: put });
      expect((await store.list('')).map((r) => [r.key, r.unserializable])).toEqual([
        ['complete', mark.unserializable],
        ['put', mark.unserializable],
      ]);
    });

    it('a result shaped like the old in-band mark is a plain result: kept as is, not marked unserializable', async () => {
      const store = await fresh();
      const result = { $chamviUnserializableResult: 'x' };
      const token = await acquire(store, 'k', 'A');
      const done = await store.complete(token, input(result));
      for (const record of [done.record, await store.get('k'), await store.put('k', input('later'))]) {
        expect(record?.result).toEqual(result);
        expect(record !== undefined && 'unserializable' in record).toBe(false);
      }
    });

    it('null and undefined results round-trip distinctly', async () => {
      const store = await fresh();
      const nul = await store.put('null', input(null));
      const undef = await store.put('undefined', input(undefined));
      expect(nul.result).toBeNull();
      expect(nul.resultUndefined).toBeUndefined();
      expect(undef.resultUndefined).toBe(true);
      expect('result' in undef).toBe(false);
      const [readNull, readUndef] = [await store.get('null'), await store.get('undefined')];
      expect(readNull?.result).toBeNull();
      expect(readNull && 'result' in readNull).toBe(true);
      expect(readUndef?.resultUndefined).toBe(true);
      expect(readUndef?.result).toBeUndefined();
    });

    it.each([
      ['a function', () => 1],
      ['a symbol', Symbol('s')],
    ])('a result JSON has no text for (%s) is recorded as undefined, with resultUndefined', async (_, result) => {
      const store = await fresh();
      const put = await store.put('put', input(result));
      const token = await acquire(store, 'complete', 'A');
      const completed = await store.complete(token, input(result));
      for (const record of [put, completed.record, await store.get('put'), await store.get('complete')]) {
        expect(record?.resultUndefined).toBe(true);
        expect(record !== undefined && 'result' in record).toBe(false);
      }
    });

    it('nested JSON and Dates round-trip as JSON', async () => {
      const store = await fresh();
      const result = {
        when: new Date('2026-01-02T03:04:05.678Z'),
        list: [1, 'two', { three: [null, true, 4.5] }],
        text: 'quote " backslash \\ nul \u0000 emoji 🦀',
        skipped: undefined,
      };
      const token = await acquire(store, 'nested', 'A');
      const done = await store.complete(token, input(result));
      const expected: unknown = JSON.parse(JSON.stringify(result));
      expect(done.record?.result).toEqual(expected);
      expect((await store.get('nested'))?.result).toEqual(expected);
    });

    it('a NUL character in a key or in the text of a record or claim is refused before anything is written', async () => {
      const store = await fresh();
      const nul = 'run-1:comment:a\u0000b';
      const refusals: Array<[Promise<unknown>, RegExp]> = [
        [store.get(nul), /Effect key "run-1:comment:a\\u0000b" contains a NUL character/],
        [store.put(nul, input(1)), /Effect key .* contains a NUL/],
        [store.claim(nul, request('A')), /Effect key .* contains a NUL/],
        [store.list('run-1:\u0000'), /Key prefix .* contains a NUL/],
        [store.claim('k', { ...request('A'), runId: 'run\u0000' }), /The run id of effect "k" contains a NUL/],
        [store.claim('k', { ...request('A'), toolName: 'c\u0000' }), /The tool name of effect "k" contains a NUL/],
        [store.put('k', input(1, { fingerprint: '\u0000' })), /The fingerprint of effect "k" contains a NUL/],
      ];
      for (const [refused, message] of refusals) {
        const error = await refused.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(EffectKeyNotStorableError.isInstance(error)).toBe(true);
        expect((error as EffectKeyNotStorableError).retryable).toBe(false);
        expect((error as Error).message).toMatch(message);
      }
      expect(await store.get('k')).toBeUndefined();
      expect(await store.claim('k', request('B'))).toMatchObject({ status: 'acquired', takeover: false });
      const token = await acquire(store, 'k2', 'A');
      await expect(store.complete(token, input(1, { runId: 'r\u0000' }))).rejects.toThrow(EffectKeyNotStorableError);
      expect(await store.complete(token, input('clean'))).toMatchObject({ status: 'ok' });
    });

    it('512-byte and unicode keys are kept exactly', async () => {
      const store = await fresh();
      const long = 'k'.repeat(512);
      const unicode = 'run-ü:comment:日本語:🦀:\u00e9 vs e\u0301';
      await store.put(long, input('long'));
      await store.put(unicode, input('unicode'));
      await store.put('run-ü:comment:日本語:🦀:e\u0301 vs \u00e9', input('other normalisation'));
      expect(await store.get(long)).toMatchObject({ key: long, result: 'long' });
      expect(await store.get(unicode)).toMatchObject({ key: unicode, result: 'unicode' });
      expect((await store.list('run-ü:comment:日本語')).map((r) => r.result)).toHaveLength(2);
    });

    it('keys longer than 512 bytes are hashed for the primary key yet kept and told apart in full', async () => {
      const store = await fresh();
      const base = 'run-long:comment:' + 'x'.repeat(600);
      const [a, b] = [`${base}:a`, `${base}:b`];
      const token = await acquire(store, a, 'A');
      expect((await store.claim(b, request('B'))).status).toBe('acquired');
      expect((await store.complete(token, input('a'))).record?.key).toBe(a);
      expect(await store.get(b)).toBeUndefined();
      await store.put(b, input('b'));
      expect((await store.list('run-long:')).map((r) => [r.key, r.result])).toEqual([
        [a, 'a'],
        [b, 'b'],
      ]);
    });

    it('list returns the finished records under a prefix, in key order, with their origin and attempt', async () => {
      const store = await fresh();
      await store.put('run-2:b', input('b', { origin: 'reconciled', attempt: 3 }));
      await store.put('run-2:a', input('a'));
      await store.put('run-20:a', input('other run'));
      await acquire(store, 'run-2:open', 'A');
      const listed = await store.list('run-2:');
      expect(listed.map((r) => [r.key, r.origin, r.attempt])).toEqual([
        ['run-2:a', 'executed', 2],
        ['run-2:b', 'reconciled', 3],
      ]);
    });
  });
}
