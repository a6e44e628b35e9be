import { describe, expect, it } from '@jest/globals';
import { dynamicTool, tool, type ToolExecutionOptions } from 'ai';
import { z } from 'zod';
import {
  defineEffectTool,
  type EffectRecord,
  type EffectRecordInput,
  type IEffectStore,
  type ToolContext,
} from '../../src/index.js';
import { isEffectTool } from '../../src/effects/define-effect-tool.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { ToolNotAllowedError } from '../../src/errors/errors.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import { callOptions, collect, makeCtx } from './helpers.js';

type Exec = (input: unknown, options: unknown) => unknown;

/** A store that counts every touch, to prove refused calls never reach it. */
class CountingStore implements IEffectStore {
  touches = 0;
  private readonly inner = new MemoryEffectStore();
  get(key: string): Promise<EffectRecord | undefined> {
    this.touches++;
    return this.inner.get(key);
  }
  put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    this.touches++;
    return this.inner.put(key, record);
  }
}

describe('wrapToolsForRun', () => {
  it('without allow, returns non-effect tools as the very same objects', () => {
    const a = tool({ inputSchema: z.object({}), execute: () => 1 });
    const b = dynamicTool({ inputSchema: z.object({}), execute: async () => 2 });
    const noExecute = tool({ inputSchema: z.object({}) });
    const w = wrapToolsForRun({ a, b, noExecute }, makeCtx(), new MemoryEffectStore());
    expect(w.a).toBe(a);
    expect(w.b).toBe(b);
    expect(w.noExecute).toBe(noExecute);
  });

  it('with allow, re-checks every call of every tool; refused calls throw ToolNotAllowedError before store or remote', async () => {
    const allowed = new Set(['plain', 'effect']);
    const seen: string[] = [];
    const plain = tool({ inputSchema: z.object({}), execute: () => (seen.push('plain'), 1) });
    const effect = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => (seen.push('effectKey'), 'k'),
      alreadyApplied: async () => void seen.push('alreadyApplied'),
      execute: () => (seen.push('execute'), 2),
    });
    const store = new CountingStore();
    const ctx = makeCtx();
    const w = wrapToolsForRun({ plain, effect }, ctx, store, (name) => allowed.has(name));
    expect(await (w.plain.execute as Exec)({}, callOptions(ctx))).toBe(1);
    expect(await (w.effect.execute as Exec)({}, callOptions(ctx))).toBe(2);
    const touches = store.touches;
    seen.length = 0;
    allowed.clear();
    expect(() => (w.plain.execute as Exec)({}, callOptions(ctx))).toThrow(ToolNotAllowedError);
    await expect((w.effect.execute as Exec)({}, callOptions(ctx))).rejects.toThrow(ToolNotAllowedError);
    await expect((w.effect.execute as Exec)({}, callOptions(ctx))).rejects.toThrow(/Tool "effect" is not allowed/);
    expect(seen).toEqual([]);
    expect(store.touches).toBe(touches);
  });

  it('with allow, a refused streaming tool throws on the first pull, before execute starts', async () => {
    let started = false;
    const stream = tool({
      inputSchema: z.object({}),
      async *execute() {
        started = true;
        yield 1;
      },
    });
    const ctx = makeCtx();
    const w = wrapToolsForRun({ stream }, ctx, new MemoryEffectStore(), () => false);
    await expect(collect((w.stream.execute as Exec)({}, callOptions(ctx)))).rejects.toThrow(ToolNotAllowedError);
    expect(started).toBe(false);
  });

  it('keeps description, inputSchema, contextSchema and the rest of the definition; the result is no longer branded', () => {
    const inputSchema = z.object({ n: z.number() });
    const contextSchema = z.object({ run: z.any() }) as unknown as z.ZodType<ToolContext>;
    const toModelOutput = () => ({ type: 'text' as const, value: 'x' });
    const t = defineEffectTool({
      description: 'desc',
      title: 'Title',
      inputSchema,
      contextSchema,
      toModelOutput,
      providerOptions: { x: { y: 1 } },
      execute: () => 1,
    });
    const w = wrapToolsForRun({ t }, makeCtx(), new MemoryEffectStore(), () => true);
    expect(w.t.description).toBe('desc');
    expect(w.t.title).toBe('Title');
    expect(w.t.inputSchema).toBe(inputSchema);
    expect(w.t.contextSchema).toBe(contextSchema);
    expect(w.t.toModelOutput).toBe(toModelOutput);
    expect(w.t.providerOptions).toEqual({ x: { y: 1 } });
    expect(w.t.execute).not.toBe(t.execute);
    expect(isEffectTool(w.t)).toBe(false); // wrapping twice does not wrap twice
    expect(wrapToolsForRun({ t: w.t }, makeCtx(), new MemoryEffectStore()).t).toBe(w.t);
  });

  it('forwards the call options (toolCallId, messages, abortSignal) to execute, with the run ToolContext as context', async () => {
    let got: ToolExecutionOptions<ToolContext> | undefined;
    const t = defineEffectTool({ inputSchema: z.object({}), execute: (_i, options) => ((got = options), 1) });
    const ctx = makeCtx();
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore());
    const abort = new AbortController();
    const messages = [{ role: 'user' as const, content: 'm' }];
    await (w.t.execute as Exec)({}, { toolCallId: 'id-1', messages, abortSignal: abort.signal });
    expect(got).toMatchObject({ toolCallId: 'id-1', messages, abortSignal: abort.signal });
    // Filled in when missing: the run's context, for this call (ctx.effect).
    expect(got?.context.run).toBe(ctx.run);
    expect(got?.context.effect?.key).toBeDefined();
  });

  it('streams a streaming execute through, records its last value, and replays the record as that one value', async () => {
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      async *execute() {
        runs++;
        yield 'a';
        await new Promise((r) => setTimeout(r, 1));
        yield 'b';
        yield 'c';
      },
    });
    const w = wrapToolsForRun({ t }, ctx, store);
    const produced = (w.t.execute as Exec)({}, callOptions(ctx));
    expect(typeof (produced as AsyncIterable<unknown>)[Symbol.asyncIterator]).toBe('function');
    expect(await collect(produced)).toEqual(['a', 'b', 'c']);
    expect(await collect((w.t.execute as Exec)({}, callOptions(ctx)))).toEqual(['c']);
    expect(runs).toBe(1);
  });

  it('a streaming execute yields its values while it runs, not all at the end', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const t = defineEffectTool({
      inputSchema: z.object({}),
      async *execute() {
        yield 'early';
        await hold;
        yield 'late';
      },
    });
    const ctx = makeCtx();
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore());
    const it = ((w.t.execute as Exec)({}, callOptions(ctx)) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ value: 'early', done: false });
    release();
    expect(await it.next()).toEqual({ value: 'late', done: false });
    expect((await it.next()).done).toBe(true);
  });

  it('a streaming execute that throws midway records nothing, and the error reaches the consumer', async () => {
    const store = new MemoryEffectStore();
    let runs = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => 'stream-k',
      async *execute() {
        runs++;
        yield 1;
        if (runs === 1) throw new Error('stream broke');
        yield 2;
      },
    });
    const ctx = makeCtx();
    const w = wrapToolsForRun({ t }, ctx, store);
    await expect(collect((w.t.execute as Exec)({}, callOptions(ctx)))).rejects.toThrow('stream broke');
    expect(await store.get('stream-k')).toBeUndefined();
    expect(await collect((w.t.execute as Exec)({}, callOptions(ctx)))).toEqual([1, 2]);
  });

  it('a streaming tool answered by alreadyApplied yields that answer once', async () => {
    const t = defineEffectTool({
      inputSchema: z.object({}),
      alreadyApplied: async () => 'remote',
      async *execute() {
        yield 'never';
      },
    });
    const ctx = makeCtx();
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore());
    expect(await collect((w.t.execute as Exec)({}, callOptions(ctx)))).toEqual(['remote']);
  });
});
