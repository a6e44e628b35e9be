import { describe, expect, it } from '@jest/globals';
import type { ToolSet } from 'ai';
import { z } from 'zod';
import {
  applyEffect,
  defaultEffectKey,
  defineEffectTool,
  EffectStoreError,
  MemoryEffectStore,
  wrapToolsForRun,
  type ClaimRequest,
  type ClaimToken,
  type EffectCallReport,
  type EffectRecordInput,
  type FencedResult,
  type IEffectStore,
  type ToolContext,
} from '../../src/index.js';
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

  it('identical parallel calls share one application: one execute, one alreadyApplied, every caller gets the result', async () => {
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
    const { call, reports } = wrapOne(t);
    const calls = [call({ n: 1 }), call({ n: 1 }), call({ n: 2 })];
    await new Promise((r) => setTimeout(r, 5));
    gate.resolve();
    expect(await Promise.all(calls)).toEqual([{ n: 1 }, { n: 1 }, { n: 2 }]);
    expect(runs).toBe(2);
    expect(checks).toBe(2);
    expect(reports.filter((r) => r.outcome === 'executed')).toHaveLength(2);
  });

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
