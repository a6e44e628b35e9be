import { describe, expect, it } from '@jest/globals';
import type { ToolSet } from 'ai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import {
  defaultEffectKey,
  defineEffectTool,
  type EffectCallReport,
  type EffectRecordInput,
  type IEffectStore,
  type ToolContext,
} from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { EffectBusyError, EffectStoreError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import type { ClaimRequest, ClaimToken, FencedResult } from '../../src/stores/effect-store.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { callOptions, captureLogger, deferred, FlakyStore, makeCtx, PlainStore, silentLogger } from './helpers.js';

type Exec = (input: unknown, options: unknown) => Promise<unknown>;

function tracedTool(trace: string[], answers: { remote?: unknown; result?: unknown } = {}) {
  return defineEffectTool({
    inputSchema: z.object({}),
    effectKey: () => {
      trace.push('effectKey');
      return 'k';
    },
    alreadyApplied: async () => {
      trace.push('alreadyApplied');
      return answers.remote;
    },
    execute: async () => {
      trace.push('execute');
      return answers.result;
    },
  });
}

/** A store that logs each operation into the trace. */
class TracedStore extends MemoryEffectStore {
  constructor(private readonly trace: string[]) {
    super();
  }
  override get(key: string) {
    this.trace.push('store.get');
    return super.get(key);
  }
  override claim(key: string, request: ClaimRequest) {
    this.trace.push('store.claim');
    return super.claim(key, request);
  }
  override complete(token: ClaimToken, record: EffectRecordInput) {
    this.trace.push('store.record');
    return super.complete(token, record);
  }
}

function wrapOne(t: unknown, store: IEffectStore = new MemoryEffectStore(), ctx: ToolContext = makeCtx()) {
  const reports: EffectCallReport[] = [];
  const w = wrapToolsForRun({ t } as ToolSet, ctx, store, undefined, {
    onReport: (r) => reports.push(r),
    logger: silentLogger,
  });
  const call = (input: unknown = {}) => (w['t']?.execute as Exec)(input, callOptions(ctx));
  return { call, reports, store, ctx };
}

describe('effect protocol', () => {
  it('runs in order: key, recorded? (answered by the claim), alreadyApplied, execute, record', async () => {
    const trace: string[] = [];
    const { call } = wrapOne(tracedTool(trace, { result: 1 }), new TracedStore(trace));
    await call();
    expect(trace).toEqual(['effectKey', 'store.claim', 'alreadyApplied', 'execute', 'store.record']);
    trace.length = 0;
    await call();
    expect(trace).toEqual(['effectKey', 'store.claim']);
  });

  it('a store without claims is read first, then written once after the effect', async () => {
    const trace: string[] = [];
    const store = new PlainStore();
    const { call } = wrapOne(tracedTool(trace, { result: 1 }), store);
    await call();
    expect([store.gets, store.puts]).toEqual([1, 1]);
    expect(trace).toEqual(['effectKey', 'alreadyApplied', 'execute']);
    trace.length = 0;
    await expect(call()).resolves.toBe(1);
    expect([store.gets, store.puts]).toEqual([2, 1]);
    expect(trace).toEqual(['effectKey']);
  });

  it('alreadyApplied returning null is recorded (origin reconciled) and returned; null is not "not applied"', async () => {
    const trace: string[] = [];
    const { call, store, reports } = wrapOne(tracedTool(trace, { remote: null, result: 'x' }));
    await expect(call()).resolves.toBeNull();
    expect(trace).toEqual(['effectKey', 'alreadyApplied']);
    expect(await store.get('k')).toMatchObject({ origin: 'reconciled', result: null });
    expect(reports.map((r) => r.outcome)).toEqual(['reconciled']);
  });

  it('execute returning undefined is recorded as done and never runs again', async () => {
    const trace: string[] = [];
    const { call, store, reports } = wrapOne(tracedTool(trace, { result: undefined }));
    await expect(call()).resolves.toBeUndefined();
    const record = await store.get('k');
    expect(record).toMatchObject({ origin: 'executed', resultUndefined: true });
    expect(record?.result).toBeUndefined();
    for (let i = 0; i < 3; i++) await expect(call()).resolves.toBeUndefined();
    expect(trace.filter((s) => s === 'execute')).toHaveLength(1);
    expect(reports.map((r) => r.outcome)).toEqual(['executed', 'recorded', 'recorded', 'recorded']);
  });

  it('execute returning undefined is recorded as done in a bare get/put store too', async () => {
    let runs = 0;
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => void runs++ });
    const { call } = wrapOne(t, new PlainStore());
    await call();
    await call();
    expect(runs).toBe(1);
  });

  it('a throwing execute records nothing and releases the claim, so the very next call applies the effect', async () => {
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        if (++runs === 1) throw new Error('boom');
        return 'ok';
      },
    });
    const { call, store, ctx } = wrapOne(t);
    await expect(call()).rejects.toThrow('boom');
    expect(await store.get(defaultEffectKey(ctx.run.runId, 't', {}))).toBeUndefined();
    const started = Date.now();
    await expect(call()).resolves.toBe('ok');
    expect(Date.now() - started).toBeLessThan(1000); // no waiting out a stale claim
  });

  it('a failing store write after the effect is logged, the call succeeds with recordPending, and the next call reconciles through alreadyApplied', async () => {
    const remote: string[] = [];
    const store = new FlakyStore();
    const logger = captureLogger();
    const ctx = makeCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({}),
      alreadyApplied: async (key) => (remote.includes(key) ? 'found' : undefined),
      execute: async () => {
        remote.push(defaultEffectKey('r', 't', {}));
        return 'posted';
      },
    });
    const reports: EffectCallReport[] = [];
    const w = wrapToolsForRun({ t }, ctx, store, undefined, { logger, onReport: (r) => reports.push(r) });
    store.failWrites = 1;
    await expect((w.t.execute as Exec)({}, callOptions(ctx))).resolves.toBe('posted');
    expect(reports[0]).toMatchObject({ outcome: 'executed', recordPending: true });
    expect(logger.messages).toHaveLength(1);
    expect(logger.messages[0]).toMatch(/applied but its result could not be recorded/);
    await expect((w.t.execute as Exec)({}, callOptions(ctx))).resolves.toBe('found');
    expect(reports[1]).toMatchObject({ outcome: 'reconciled' });
    expect(reports[1]?.recordPending).toBeUndefined();
    expect(remote).toHaveLength(1);
  });

  it('applyEffect hands back the unrecorded record so a caller can write it later, and tells onRecordFailed', async () => {
    const store = new FlakyStore();
    store.failWrites = 1;
    const failed: string[] = [];
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => 7 });
    const res = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger, onRecordFailed: (key) => failed.push(key) },
    );
    expect(res.result).toBe(7);
    expect(res.unrecorded?.record).toMatchObject({ toolName: 't', result: 7, origin: 'executed' });
    expect(failed).toEqual([res.report.key]);
    await store.put(res.unrecorded!.key, res.unrecorded!.record);
    expect((await store.get(res.report.key))?.result).toBe(7);
  });

  it('an effect whose claim was taken over before its record is still recorded, first writer wins, ending the other claim', async () => {
    class LosingStore extends MemoryEffectStore {
      override complete(): Promise<FencedResult> {
        return Promise.resolve({ status: 'lost' });
      }
    }
    const store = new LosingStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => 1 });
    const res = await applyEffect({ tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) }, { store });
    expect(res.result).toBe(1);
    expect(res.report).toMatchObject({ outcome: 'executed' });
    expect(res.report.recordPending).toBeUndefined();
    expect((await store.get(res.report.key))?.result).toBe(1);
  });

  it('a store that cannot be read fails the call with a retryable EffectStoreError and applies nothing', async () => {
    let runs = 0;
    const store = new FlakyStore();
    store.failReads = 1;
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => ++runs });
    const { call } = wrapOne(t, store);
    const error = await call().catch((e: unknown) => e);
    expect(EffectStoreError.isInstance(error)).toBe(true);
    expect((error as EffectStoreError).retryable).toBe(true);
    expect(runs).toBe(0);
  });

  // A store without claims: nothing but the in-process sharing keeps the second identical call
  // from reading "not recorded" and applying the effect beside the first.
  it('identical parallel calls share one application in process, even on a store without claims: one execute, one alreadyApplied, every caller gets the result', async () => {
    const gate = deferred();
    let checks = 0;
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({ n: z.number() }),
      alreadyApplied: async () => void checks++,
      execute: async ({ n }) => {
        runs++;
        await gate.promise;
        return { n };
      },
    });
    const store = new PlainStore();
    const { call, reports } = wrapOne(t, store);
    const calls = [call({ n: 1 }), call({ n: 1 }), call({ n: 2 })];
    await new Promise((r) => setTimeout(r, 5));
    gate.resolve();
    expect(await Promise.all(calls)).toEqual([{ n: 1 }, { n: 1 }, { n: 2 }]);
    expect(runs).toBe(2);
    expect(checks).toBe(2);
    expect(reports.filter((r) => r.outcome === 'executed')).toHaveLength(2);
    expect(reports.filter((r) => r.outcome === 'recorded')).toHaveLength(1);
    expect(store.gets).toBe(2);
  });

  // Two store instances on one file share no in-process calls: only the claim stands between them.
  it("identical calls through two store instances on one SQLite file apply once: the claim makes the second wait for the first one's record", async () => {
    /** Tells when a claim of this instance was answered "busy" (another attempt holds the key). */
    class WatchedStore extends SqliteEffectStore {
      readonly refused = deferred();
      override async claim(key: string, request: ClaimRequest) {
        const answer = await super.claim(key, request);
        if (answer.status === 'busy') this.refused.resolve();
        return answer;
      }
    }
    const dir = mkdtempSync(join(tmpdir(), 'chamvi-claim-'));
    const first = new WatchedStore(join(dir, 'effects.db'));
    const second = new WatchedStore(join(dir, 'effects.db'));
    try {
      const gate = deferred();
      const entered = deferred();
      const enteredTwice = deferred();
      let runs = 0;
      const t = defineEffectTool({
        inputSchema: z.object({}),
        alreadyApplied: async () => undefined,
        execute: async () => {
          if (++runs === 1) entered.resolve();
          else enteredTwice.resolve();
          await gate.promise;
          return 'posted';
        },
      });
      const ctx = makeCtx('r');
      const go = (store: IEffectStore) =>
        applyEffect(
          { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
          { store, logger: silentLogger, busyWaitMs: 5_000 },
        );
      const applying = go(first);
      await entered.promise;
      const waiting = go(second);
      // The first one finishes only once the second is parked on the claim (or, without claims,
      // has gone past it into execute).
      await Promise.race([second.refused.promise, enteredTwice.promise]);
      gate.resolve();
      const [a, b] = await Promise.all([applying, waiting]);
      expect(runs).toBe(1);
      expect([a.report.outcome, b.report.outcome]).toEqual(['executed', 'recorded']);
      expect(b.result).toBe('posted');
    } finally {
      await Promise.all([first.close(), second.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an identical call in flight in this process is awaited at most busyWaitMs, then fails with a retryable EffectBusyError; the running call keeps the key', async () => {
    const gate = deferred();
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        runs++;
        await gate.promise;
        return 'posted';
      },
    });
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const go = (busyWaitMs?: number) =>
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger, ...(busyWaitMs !== undefined ? { busyWaitMs } : {}) },
      );
    const hung = go();
    const started = performance.now();
    const error = await go(300).catch((e: unknown) => e);
    const waited = performance.now() - started;
    expect(EffectBusyError.isInstance(error)).toBe(true);
    expect((error as EffectBusyError).retryable).toBe(true);
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(1_500);
    expect(runs).toBe(1);
    gate.resolve();
    await expect(hung).resolves.toMatchObject({ result: 'posted', report: { outcome: 'executed' } });
    await expect(go()).resolves.toMatchObject({ result: 'posted', report: { outcome: 'recorded' } });
    expect(runs).toBe(1);
  }, 10_000);

  it("an identical call in flight in this process is awaited no longer than the waiting call's own signal: it fails with the abort reason", async () => {
    const gate = deferred();
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        runs++;
        await gate.promise;
        return 'posted';
      },
    });
    const store = new MemoryEffectStore();
    const call = (ctx: ToolContext) =>
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger, busyWaitMs: 60_000 },
      );
    const hung = call(makeCtx('r'));
    const cancel = new AbortController();
    const reason = new Error('attempt cancelled');
    const started = performance.now();
    setTimeout(() => cancel.abort(reason), 100);
    await expect(call(makeCtx('r', { signal: cancel.signal }))).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(1_500);
    // Already aborted: refused before waiting at all.
    await expect(call(makeCtx('r', { signal: cancel.signal }))).rejects.toBe(reason);
    expect(runs).toBe(1);
    gate.resolve();
    await hung;
  }, 10_000);

  it('identical parallel calls share a failure too, and a later retry applies the effect', async () => {
    const gate = deferred();
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        runs++;
        await gate.promise;
        if (runs === 1) throw new Error('first failed');
        return 'second';
      },
    });
    const { call } = wrapOne(t);
    const both = Promise.allSettled([call(), call()]);
    gate.resolve();
    expect((await both).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await expect(call()).resolves.toBe('second');
    expect(runs).toBe(2);
  });

  it('reports key, tool, toolCallId, outcome and attempts for every call', async () => {
    const t = defineEffectTool({ inputSchema: z.object({}), effectKey: () => 'the-key', execute: async () => 1 });
    const ctx = makeCtx();
    const reports: EffectCallReport[] = [];
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore(), undefined, { onReport: (r) => reports.push(r) });
    await (w.t.execute as Exec)({}, callOptions(ctx, { toolCallId: 'call-1' }));
    expect(reports).toEqual([
      { key: 'the-key', toolName: 't', toolCallId: 'call-1', outcome: 'executed', attempts: 1 },
    ]);
  });

  it('a result is replayed as the store keeps it (JSON), the same on the first call and on replays', async () => {
    const when = new Date('2024-01-01T00:00:00.000Z');
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => ({ when, n: 1 }) });
    const { call } = wrapOne(t);
    const first = await call();
    const replay = await call();
    expect(replay).toEqual({ when: when.toISOString(), n: 1 });
    expect(first).toEqual(replay);
  });
});
