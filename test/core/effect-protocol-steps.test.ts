// Each step of the effect protocol (applyEffect, src/effects/effect-protocol.ts) in detail: what a
// call hands the store (claim, record, fingerprint), which key it applies under, the path of a store
// without claims, the checks around execute, and an applied result that cannot be serialised.
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  defineEffectTool,
  defaultEffectKey,
  inputFingerprint,
  type EffectRecord,
  type EffectRecordInput,
  type IEffectStore,
} from '../../src/index.js';
import { applyEffect, type EffectCall } from '../../src/effects/effect-protocol.js';
import { EffectResultNotSerializableError, EffectStoreError, InvalidEffectKeyError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ClaimRequest, ClaimResult, ClaimToken, FencedResult } from '../../src/stores/effect-store.js';
import { resolveCallKey, resolveEffectKey } from '../../src/effects/effect-key.js';
import { storeFailure } from '../../src/effects/store-failure.js';
import { callOptions, captureLogger, deferred, FlakyStore, makeCtx, PlainStore, silentLogger } from './helpers.js';

/** A memory store that keeps what the protocol handed it. */
class SpyStore extends MemoryEffectStore {
  readonly claims: ClaimRequest[] = [];
  readonly completes: EffectRecordInput[] = [];
  override claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    this.claims.push(request);
    return super.claim(key, request);
  }
  override complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult> {
    this.completes.push(record);
    return super.complete(token, record);
  }
}

describe('what an effect call hands the store', () => {
  it('claims with the attempt, owner, lease, tool, run and input fingerprint of the call', async () => {
    const store = new SpyStore();
    const ctx = makeCtx('run-7');
    const t = defineEffectTool({ inputSchema: z.object({ n: z.number() }), execute: async () => 'ok' });
    await applyEffect(
      { tool: t, toolName: 'post', input: { n: 1 }, ctx, options: callOptions(ctx) },
      { store, attempt: 3, owner: 'owner-x', leaseMs: 4_321, logger: silentLogger },
    );
    expect(store.claims).toStrictEqual([
      {
        owner: 'owner-x',
        leaseMs: 4_321,
        toolName: 'post',
        runId: 'run-7',
        attempt: 3,
        fingerprint: inputFingerprint({ n: 1 }),
      },
    ]);
  });

  it('claims with a fresh owner token per call and a 60 s lease by default', async () => {
    const store = new SpyStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({ n: z.number() }), execute: async () => 'ok' });
    for (const n of [1, 2]) {
      await applyEffect(
        { tool: t, toolName: 't', input: { n }, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger },
      );
    }
    const [first, second] = store.claims;
    expect(first?.leaseMs).toBe(60_000);
    expect(first?.attempt).toBe(1);
    expect(typeof first?.owner).toBe('string');
    expect(first?.owner.length).toBeGreaterThan(0);
    expect(first?.owner).not.toBe(second?.owner);
  });

  it('records the fingerprint of the input for a custom key too, and none for an input canonical JSON refuses', async () => {
    const store = new SpyStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({}).passthrough(),
      effectKey: (input) => `custom:${JSON.stringify(Object.keys(input as object))}`,
      execute: async () => 'ok',
    });
    await applyEffect(
      { tool: t, toolName: 't', input: { n: 1 }, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );
    await applyEffect(
      { tool: t, toolName: 't', input: { big: 1n }, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );
    expect(store.completes.map((r) => r.fingerprint)).toStrictEqual([inputFingerprint({ n: 1 }), undefined]);
    expect(store.claims.map((r) => r.fingerprint)).toStrictEqual([inputFingerprint({ n: 1 }), undefined]);
  });

  it('records tool, run, attempt, origin and fingerprint with the result; resultUndefined only for an undefined result', async () => {
    const store = new SpyStore();
    const ctx = makeCtx('run-9');
    const t = defineEffectTool({
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }) => (n === 1 ? { posted: n } : undefined),
    });
    for (const n of [1, 2]) {
      await applyEffect(
        { tool: t, toolName: 'post', input: { n }, ctx, options: callOptions(ctx) },
        { store, attempt: 2, logger: silentLogger },
      );
    }
    expect(store.completes).toStrictEqual([
      {
        toolName: 'post',
        result: { posted: 1 },
        origin: 'executed',
        runId: 'run-9',
        attempt: 2,
        fingerprint: inputFingerprint({ n: 1 }),
      },
      {
        toolName: 'post',
        result: undefined,
        origin: 'executed',
        runId: 'run-9',
        attempt: 2,
        fingerprint: inputFingerprint({ n: 2 }),
        resultUndefined: true,
      },
    ]);
  });
});

describe('onBusyWait', () => {
  it('hears the key once when a call waits for an identical call in flight', async () => {
    const gate = deferred();
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        await gate.promise;
        return 'posted';
      },
    });
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const busy: string[] = [];
    const go = () =>
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger, onBusyWait: (key) => busy.push(key) },
      );
    const running = go();
    const sharing = go();
    gate.resolve();
    const [a] = await Promise.all([running, sharing]);
    expect(busy).toStrictEqual([a.report.key]);
  });

  it("hears the key once when a call waits for another attempt's live claim, however many times it asks", async () => {
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), effectKey: () => 'held', execute: async () => 'mine' });
    // Another attempt holds the key for 200 ms and never finishes: the call asks several times.
    await store.claim('held', { owner: 'other', leaseMs: 200, toolName: 't' });
    const busy: string[] = [];
    const res = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger, busyWaitMs: 5_000, onBusyWait: (key) => busy.push(key) },
    );
    expect(res.result).toBe('mine');
    expect(busy).toStrictEqual(['held']);
  });

  it('hears nothing when the key was free', async () => {
    const busy: string[] = [];
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => 1 });
    await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store: new MemoryEffectStore(), logger: silentLogger, onBusyWait: (key) => busy.push(key) },
    );
    expect(busy).toStrictEqual([]);
  });
});

describe('the effect key of a call', () => {
  const ctx = makeCtx('run-k');
  const plain = defineEffectTool({ inputSchema: z.object({ n: z.number() }), execute: async () => 'ok' });
  const custom = defineEffectTool({
    inputSchema: z.object({ n: z.number() }),
    effectKey: async ({ n }) => `run-k:custom:${n}`,
    execute: async () => 'ok',
  });

  it('hashes the input once for a default key: its fingerprint is read off the key, also when the caller resolved the key first', async () => {
    let hashed = 0;
    // canonicalJson writes a toJSON value through it: one call per hash of the input.
    const input = { n: 1, at: { toJSON: () => (hashed++, 'then') } };
    const store = new SpyStore();
    const call = { tool: plain as EffectCall['tool'], toolName: 't', input, ctx, options: callOptions(ctx) };
    await applyEffect(call, { store, logger: silentLogger });
    expect(hashed).toBe(1);
    // As the effect-call activity does: the key (checked against the planned one), then the protocol.
    const resolved = await resolveCallKey({ ...call, input: { ...input, n: 2 } });
    await applyEffect({ ...call, input: { ...input, n: 2 }, ...resolved }, { store, logger: silentLogger });
    expect(hashed).toBe(2);
    expect(store.completes.map((r) => r.fingerprint)).toStrictEqual([
      inputFingerprint({ n: 1, at: 'then' }),
      inputFingerprint({ n: 2, at: 'then' }),
    ]);
    expect(resolved.key).toBe(defaultEffectKey('run-k', 't', { n: 2, at: 'then' }));
  });

  it('resolveEffectKey gives the default key, the awaited custom key, or the key the caller computed', async () => {
    const call = { toolName: 't', input: { n: 1 }, ctx, options: callOptions(ctx) };
    await expect(resolveEffectKey({ ...call, tool: plain as EffectCall['tool'] })).resolves.toBe(
      defaultEffectKey('run-k', 't', { n: 1 }),
    );
    await expect(resolveEffectKey({ ...call, tool: custom as EffectCall['tool'] })).resolves.toBe('run-k:custom:1');
    await expect(resolveEffectKey({ ...call, tool: custom as EffectCall['tool'], key: 'given' })).resolves.toBe(
      'given',
    );
    await expect(resolveEffectKey({ ...call, tool: plain as EffectCall['tool'], key: '' })).rejects.toThrow(
      InvalidEffectKeyError,
    );
  });

  it("applies under the key the caller computed, not the tool's own, and fingerprints the input, not the key", async () => {
    const store = new SpyStore();
    let keyed = 0;
    const counted = defineEffectTool({
      inputSchema: z.object({ n: z.number() }),
      effectKey: () => `own:${++keyed}`,
      execute: async () => 'ok',
    });
    for (const [key, tool] of [
      ['given-a', counted],
      ['given-b', plain],
    ] as const) {
      const res = await applyEffect(
        { tool, toolName: 't', input: { n: 1 }, ctx, options: callOptions(ctx), key },
        { store, logger: silentLogger },
      );
      expect(res.report.key).toBe(key);
    }
    expect(keyed).toBe(0);
    expect(store.completes.map((r) => r.fingerprint)).toStrictEqual([
      inputFingerprint({ n: 1 }),
      inputFingerprint({ n: 1 }),
    ]);
    expect(await store.get('given-a')).toMatchObject({ result: 'ok' });
  });
});

/** A get/put store whose next `failPuts` writes throw. */
class FlakyPlainStore extends PlainStore {
  failPuts = 0;
  override put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    if (this.failPuts > 0) {
      this.failPuts--;
      return Promise.reject(new Error('store unreachable (write)'));
    }
    return super.put(key, record);
  }
}

describe('an effect call on a store without claims', () => {
  const ctx = makeCtx('r');
  const call = (tool: unknown, store: IEffectStore) =>
    applyEffect(
      { tool: tool as EffectCall['tool'], toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );

  it("rethrows execute's own error and records nothing", async () => {
    const store = new PlainStore();
    const boom = new Error('boom');
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        throw boom;
      },
    });
    await expect(call(t, store)).rejects.toBe(boom);
    expect(store.records.size).toBe(0);
  });

  it('succeeds with recordPending and the unrecorded record when the write after the effect fails', async () => {
    const store = new FlakyPlainStore();
    store.failPuts = 1;
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => 'posted' });
    const res = await call(t, store);
    expect(res.result).toBe('posted');
    expect(res.report).toMatchObject({ outcome: 'executed', recordPending: true });
    expect(res.unrecorded).toMatchObject({ key: res.report.key, record: { result: 'posted', origin: 'executed' } });
  });

  it("returns execute's result when the store's put returns nothing (it is trusted to have kept it)", async () => {
    const kept: EffectRecordInput[] = [];
    const store = {
      get: async () => undefined,
      put: async (_key: string, record: EffectRecordInput) => void kept.push(record),
    };
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => ({ id: 1 }) });
    const res = await call(t, store);
    expect(res.result).toStrictEqual({ id: 1 });
    expect(res.report.recordPending).toBeUndefined();
    expect(kept).toHaveLength(1);
  });

  it("returns the earlier record's result when the put finds one (first writer wins)", async () => {
    const store = new PlainStore();
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        // Another writer records the key while this execute runs.
        await store.put(defaultEffectKey('r', 't', {}), { toolName: 't', result: 'theirs', origin: 'executed' });
        return 'mine';
      },
    });
    const res = await call(t, store);
    expect(res.result).toBe('theirs');
  });
});

describe('an applied effect whose result cannot be serialised', () => {
  it('is marked done with the origin reconciled when alreadyApplied found it', async () => {
    const store = new SpyStore();
    const ctx = makeCtx('r');
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      alreadyApplied: async () => ({ big: 1n }),
      execute: async () => ({ big: BigInt(++runs) }),
    });
    await expect(
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger },
      ),
    ).rejects.toThrow(EffectResultNotSerializableError);
    expect(store.completes).toHaveLength(1);
    expect(store.completes[0]).toMatchObject({
      origin: 'reconciled',
      resultUndefined: true,
      unserializable: expect.stringContaining('BigInt'),
    });
    expect(runs).toBe(0);
  });

  it('logs when the key cannot be marked done and gives the claim back at once', async () => {
    const store = new FlakyStore();
    store.failWrites = 1;
    const logger = captureLogger();
    const ctx = makeCtx('r');
    let runs = 0;
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => ({ n: ++runs, big: 1n }) });
    const go = () =>
      applyEffect({ tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) }, { store, logger });
    await expect(go()).rejects.toThrow(EffectResultNotSerializableError);
    expect(logger.messages).toHaveLength(1);
    expect(logger.messages[0]).toMatch(/its result is not serialisable, and the key could not be marked done/);
    // Nothing marked the key done and the claim was released: the next call applies again, without waiting.
    const started = Date.now();
    await expect(go()).rejects.toThrow(EffectResultNotSerializableError);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(runs).toBe(2);
  });
});

describe('the checks around execute', () => {
  it('a store without claims that cannot be read fails the call with a retryable EffectStoreError saying "read"', async () => {
    const store = new PlainStore();
    store.get = () => Promise.reject(new Error('connection refused'));
    const ctx = makeCtx('r');
    let runs = 0;
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => ++runs });
    const error = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    ).catch((e: unknown) => e);
    expect(EffectStoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/Could not read effect .* connection refused/);
    expect(runs).toBe(0);
  });

  it('a call whose signal aborted before execute runs nothing, rethrows the reason and gives the claim back', async () => {
    const store = new MemoryEffectStore();
    const cancel = new AbortController();
    const reason = new Error('cancelled');
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      // The attempt is cancelled while its remote check runs.
      alreadyApplied: async () => void cancel.abort(reason),
      execute: async () => ++runs,
    });
    const go = (signal?: AbortSignal) => {
      const ctx = makeCtx('r', signal === undefined ? {} : { signal });
      return applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger, busyWaitMs: 200 },
      );
    };
    await expect(go(cancel.signal)).rejects.toBe(reason);
    expect(runs).toBe(0);
    await expect(go()).resolves.toMatchObject({ result: 1, report: { outcome: 'executed' } });
  });

  it('a context that cannot be copied for the call (a throwing getter) fails it and gives the claim back', async () => {
    const store = new MemoryEffectStore();
    let runs = 0;
    const t = defineEffectTool({ inputSchema: z.object({}), effectKey: () => 'k', execute: async () => ++runs });
    const base = makeCtx('r');
    const hostile = Object.defineProperty({ ...base }, 'session', {
      enumerable: true,
      get: () => {
        throw new Error('session expired');
      },
    });
    await expect(
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx: hostile, options: callOptions(hostile) },
        { store, logger: silentLogger },
      ),
    ).rejects.toThrow('session expired');
    expect(runs).toBe(0);
    await expect(store.claim('k', { owner: 'next', leaseMs: 60_000, toolName: 't' })).resolves.toMatchObject({
      status: 'acquired',
    });
  });

  it('logs the key and the error when the record cannot be written after the effect', async () => {
    const store = new FlakyStore();
    store.failWrites = 1;
    const metas: unknown[] = [];
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), effectKey: () => 'k-log', execute: async () => 1 });
    await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: { warn: (_message, meta) => void metas.push(meta) } },
    );
    expect(metas).toStrictEqual([{ key: 'k-log', error: 'store unreachable (write)' }]);
  });

  it("records with a first-writer-wins put when its claim was lost without a record, and returns that put's winner", async () => {
    class LosingStore extends MemoryEffectStore {
      override complete(): Promise<FencedResult> {
        return Promise.resolve({ status: 'lost' });
      }
    }
    const store = new LosingStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => 'k-lost',
      execute: async () => {
        // The attempt that took the key over recorded it meanwhile.
        await store.put('k-lost', { toolName: 't', result: 'theirs', origin: 'executed' });
        return 'mine';
      },
    });
    const res = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );
    expect(res.result).toBe('theirs');
  });
});

describe('an unserialisable result that cannot be marked done', () => {
  it('logs the key and the error, and fails with EffectResultNotSerializableError on a store without claims too', async () => {
    const store = new FlakyPlainStore();
    store.failPuts = 1;
    const metas: unknown[] = [];
    const ctx = makeCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => 'k-big',
      execute: async () => ({ big: 1n }),
    });
    await expect(
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: { warn: (_message, meta) => void metas.push(meta) } },
      ),
    ).rejects.toThrow(EffectResultNotSerializableError);
    expect(metas).toStrictEqual([{ key: 'k-big', error: 'store unreachable (write)' }]);
  });
});

describe('a store failure before the effect', () => {
  it('keeps the store error as its cause', () => {
    const cause = new Error('connection refused');
    const failure = storeFailure(cause, 'k', 'read');
    expect(EffectStoreError.isInstance(failure)).toBe(true);
    expect(failure.cause).toBe(cause);
  });
});

describe('the paths a call can take, each told as it happens', () => {
  const plainTool = (found: unknown, runs: { n: number }): EffectCall['tool'] =>
    (found === 'none'
      ? defineEffectTool({ inputSchema: z.object({}), execute: async () => ++runs.n })
      : defineEffectTool({
          inputSchema: z.object({}),
          alreadyApplied: async () => found as number | undefined,
          execute: async () => ++runs.n,
        })) as unknown as EffectCall['tool'];

  it('a store without claims: no remote check for a tool without one, none of execute once it found the effect, none of either once the signal aborted', async () => {
    const ctx = makeCtx('r');
    const go = (tool: EffectCall['tool'], c = ctx) => {
      const events: string[] = [];
      const done = applyEffect(
        { tool, toolName: 't', input: {}, ctx: c, options: callOptions(c) },
        { store: new PlainStore(), logger: silentLogger, observe: (e) => void events.push(e.type) },
      );
      return { events, done };
    };
    const runs = { n: 0 };
    const unchecked = go(plainTool('none', runs));
    await expect(unchecked.done).resolves.toMatchObject({ result: 1, report: { outcome: 'executed' } });
    expect(unchecked.events).toStrictEqual(['execute', 'execute', 'record']);

    const found = go(plainTool('posted earlier', runs));
    await expect(found.done).resolves.toMatchObject({ result: 'posted earlier', report: { outcome: 'reconciled' } });
    expect(runs.n).toBe(1);

    const cancel = new AbortController();
    const reason = new Error('cancelled');
    cancel.abort(reason);
    await expect(go(plainTool(undefined, runs), makeCtx('r', { signal: cancel.signal })).done).rejects.toBe(reason);
    expect(runs.n).toBe(1);
  });

  it('a late attempt that records the effect while this one checks remotely is the answer: execute does not run', async () => {
    const store = new MemoryEffectStore();
    // An earlier attempt's lease ran out, so this call takes the key over (fence 2) and reads before applying.
    await store.claim('k', { owner: 'earlier', leaseMs: 1, toolName: 't' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => 'k',
      alreadyApplied: async () => {
        await store.put('k', { toolName: 't', result: 'theirs', origin: 'executed' });
        return undefined;
      },
      execute: async () => ++runs,
    });
    const ctx = makeCtx('r');
    const res = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );
    expect(runs).toBe(0);
    expect(res).toMatchObject({ result: 'theirs', report: { outcome: 'recorded' } });
  });

  it("waits busyWaitMs for another attempt's live claim, not the default", async () => {
    const store = new MemoryEffectStore();
    await store.claim('held', { owner: 'other', leaseMs: 60_000, toolName: 't' });
    const t = defineEffectTool({ inputSchema: z.object({}), effectKey: () => 'held', execute: async () => 1 });
    const ctx = makeCtx('r');
    const started = Date.now();
    const failure = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger, busyWaitMs: 50 },
    ).catch((e: unknown) => e);
    expect((failure as Error).name).toBe('EffectBusyError');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a call sharing an identical call in flight is told as a busy claim; an observer that throws there is logged to the call’s logger', async () => {
    const gate = deferred();
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        await gate.promise;
        return 'posted';
      },
    });
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const warnings: Array<{ message: string; meta: unknown }> = [];
    const seen: unknown[] = [];
    const running = applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );
    const sharing = applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      {
        store,
        logger: { warn: (message, meta) => void warnings.push({ message, meta }) },
        observe: (event) => {
          seen.push(event);
          throw new Error('observer broke');
        },
      },
    );
    gate.resolve();
    await Promise.all([running, sharing]);
    expect(seen).toStrictEqual([{ type: 'claim', result: 'busy' }]);
    expect(warnings).toStrictEqual([
      {
        message: 'An effect observer threw; the call goes on without it.',
        meta: { event: 'claim', error: 'observer broke' },
      },
    ]);
  });

  it('an onRecordFailed that throws is logged with the key, and the call still succeeds', async () => {
    const store = new FlakyStore();
    store.failWrites = 1;
    const warnings: Array<{ message: string; meta: unknown }> = [];
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), effectKey: () => 'k-hook', execute: async () => 1 });
    const res = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      {
        store,
        logger: { warn: (message, meta) => void warnings.push({ message, meta }) },
        onRecordFailed: () => {
          throw new Error('hook broke');
        },
      },
    );
    expect(res.report.recordPending).toBe(true);
    expect(warnings.at(-1)).toStrictEqual({
      message: 'onRecordFailed threw; the call goes on without it.',
      meta: { key: 'k-hook', error: 'hook broke' },
    });
  });

  it('call options built without messages reach execute', async () => {
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async (_input, options) => options.toolCallId });
    const ctx = makeCtx('r');
    const options = { toolCallId: 'no-messages', context: ctx } as unknown as EffectCall['options'];
    const res = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options },
      { store: new MemoryEffectStore(), logger: silentLogger },
    );
    expect(res.result).toBe('no-messages');
  });
});
