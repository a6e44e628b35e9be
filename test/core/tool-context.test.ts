import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ChamviError, defineAgent, defineEffectTool, runAgent, type ToolContext } from '../../src/index.js';
import { createToolContext, guardToolContext } from '../../src/context/tool-context.js';
import { InvalidToolContextError, LegacyContextFieldError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import { PlainStore, scriptedModel } from './helpers.js';

type Exec = (input: unknown, options: unknown) => Promise<unknown>;

/** A context built by hand, as the spec's examples do: no createToolContext, so no guards of its own. */
function plainCtx(runId: string): ToolContext {
  return {
    run: { runId, agent: 'a', trigger: undefined, signal: new AbortController().signal },
    state: {},
    artifacts: {},
  };
}

/** What `promise` rejected with (a failure if it resolved). */
async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error as Error,
  );
}

describe('ToolContext', () => {
  it('holds run { runId, trigger, agent, signal }, state and artifacts (defaults {})', () => {
    const abort = new AbortController();
    const ctx = createToolContext({ runId: 'r', agent: 'a', trigger: { issue: 1 }, signal: abort.signal });
    expect(ctx.run).toEqual({ runId: 'r', trigger: { issue: 1 }, agent: 'a', signal: abort.signal });
    expect(ctx.state).toEqual({});
    expect(ctx.artifacts).toEqual({});
    expect(createToolContext({ runId: 'r', agent: 'a' }).run.signal.aborted).toBe(false);
  });

  it('rejects an empty runId: it prefixes every effect key', () => {
    expect(() => createToolContext({ runId: '', agent: 'a' })).toThrow(TypeError);
  });

  it.each(['runId', 'agent', 'trigger', 'signal'])(
    'reading the 0.1 field ctx.%s throws LegacyContextFieldError naming ctx.run.<field>',
    (field) => {
      const ctx = createToolContext({ runId: 'r', agent: 'a' }) as unknown as Record<string, unknown>;
      let error: unknown;
      try {
        void ctx[field];
      } catch (e) {
        error = e;
      }
      expect(LegacyContextFieldError.isInstance(error)).toBe(true);
      expect(ChamviError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain(`ctx.run.${field}`);
      expect((error as LegacyContextFieldError).retryable).toBe(false);
    },
  );

  it('JSON.stringify(ctx) works and shows only run, state and artifacts', () => {
    const ctx = createToolContext({ runId: 'r', agent: 'a', trigger: 't', state: { n: 1 }, artifacts: { f: 'x' } });
    const json = JSON.parse(JSON.stringify(ctx)) as Record<string, unknown>;
    expect(Object.keys(json).sort()).toEqual(['artifacts', 'run', 'state']);
    expect(json['run']).toMatchObject({ runId: 'r', agent: 'a', trigger: 't' });
    expect({ ...ctx }).toEqual({ run: ctx.run, state: { n: 1 }, artifacts: { f: 'x' } });
    expect('runId' in ctx).toBe(true); // the guard exists, it just is not enumerable
  });

  it('is frozen: tools cannot rewrite the run they belong to', () => {
    const ctx = createToolContext({ runId: 'r', agent: 'a' });
    expect(Object.isFrozen(ctx)).toBe(true);
    expect(Object.isFrozen(ctx.run)).toBe(true);
  });

  it("the hooks and execute (as options.context) get the run's context, even when the tool has a contextSchema that strips fields; alreadyApplied and execute one object with ctx.effect", async () => {
    const seen: ToolContext[] = [];
    const t = defineEffectTool({
      inputSchema: z.object({}),
      // a zod object strips unknown keys: the AI SDK's validated copy would lose `run`
      contextSchema: z.object({ state: z.object({ n: z.number() }) }) as unknown as z.ZodType<ToolContext>,
      effectKey: (_i, ctx) => (seen.push(ctx), `${ctx.run.runId}:k`),
      alreadyApplied: async (_k, _i, ctx) => void seen.push(ctx),
      execute: async (_i, { context }) => (seen.push(context), context.run.runId),
    });
    const agent = defineAgent({
      name: 'ctx',
      model: scriptedModel([{ calls: [{ toolName: 't', input: {} }] }, { text: 'ok' }]),
      tools: { t },
    });
    const res = await runAgent(agent, { prompt: 'p', store: new MemoryEffectStore(), runId: 'r-1', state: { n: 1 } });
    expect(res.steps[0]?.toolResults[0]?.output).toBe('r-1');
    expect(seen).toHaveLength(3);
    const [keyed, checked, executed] = seen;
    for (const field of ['run', 'state', 'artifacts'] as const) expect(executed?.[field]).toBe(keyed?.[field]);
    expect(checked).toBe(executed);
    expect(keyed?.effect).toBeUndefined();
    expect(executed?.effect).toEqual({ key: 'r-1:k', step: 0, fence: 1 });
    expect(() => (executed as unknown as { runId: string }).runId).toThrow(LegacyContextFieldError);
  });

  it('the LegacyContextFieldError message names this package (@chamvi/temporal) and the 0.1 origin of the field', () => {
    const message = new LegacyContextFieldError('runId').message;
    expect(message).toContain('@chamvi/temporal');
    expect(message).toContain('0.1');
    expect(message).not.toMatch(/removed in @chamvi\/core 0\.2/);
  });
});

describe('a plain-object context given to wrapToolsForRun', () => {
  it('a custom key reading the 0.1 ctx.runId throws LegacyContextFieldError instead of collapsing keys across runs', async () => {
    let executed = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: (_i, ctx) => `${(ctx as unknown as { runId: string }).runId}:comment`,
      execute: () => ++executed,
    });
    const store = new PlainStore();
    for (const runId of ['run-1', 'run-2']) {
      const ctx = plainCtx(runId);
      const w = wrapToolsForRun({ t }, ctx, store);
      const error = await rejectionOf((w.t.execute as Exec)({}, { toolCallId: 'c', messages: [], context: ctx }));
      expect(LegacyContextFieldError.isInstance(error)).toBe(true);
      expect(error.message).toContain('ctx.run.runId');
    }
    expect(executed).toBe(0);
    expect(store.gets + store.puts).toBe(0);
  });

  it('alreadyApplied and execute (options.context) get the guarded view too', async () => {
    const ctx = plainCtx('r');
    const checks = defineEffectTool({
      inputSchema: z.object({}),
      alreadyApplied: async (_k, _i, c) => ((c as unknown as { signal: AbortSignal }).signal.aborted ? 1 : undefined),
      execute: () => 1,
    });
    const runs = defineEffectTool({
      inputSchema: z.object({}),
      execute: (_i, { context }) => (context as unknown as { trigger: unknown }).trigger ?? 'no trigger',
    });
    const w = wrapToolsForRun({ checks, runs }, ctx, new MemoryEffectStore());
    const options = { toolCallId: 'c', messages: [], context: ctx };
    await expect((w.checks.execute as Exec)({}, options)).rejects.toThrow(/ctx\.signal is a field of the 0\.1/);
    await expect((w.runs.execute as Exec)({}, options)).rejects.toThrow(LegacyContextFieldError);
  });

  it("effectKey's options.context is the guarded context too, even when the caller passes its plain object", async () => {
    const ctx = plainCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: (_i, _c, options) => `${(options.context as unknown as { agent: string }).agent}:k`,
      execute: () => 1,
    });
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore());
    await expect((w.t.execute as Exec)({}, { toolCallId: 'c', messages: [], context: ctx })).rejects.toThrow(
      LegacyContextFieldError,
    );
  });

  it('the view reads through to the user object (its own fields, later changes, JSON), which is neither changed nor frozen', async () => {
    const ctx = { ...plainCtx('r'), github: { owner: 'acme' }, signal: 'mine' } as ToolContext & {
      github: { owner: string };
      signal: string;
    };
    const before = JSON.stringify(ctx);
    const seen: unknown[] = [];
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: (_i, c) => {
        const view = c as typeof ctx;
        // A field the user put there under a 0.1 name is theirs, not a 0.1 read.
        seen.push(view.github.owner, view.signal, JSON.stringify(view), Object.keys(view).join());
        return `${view.run.runId}:k`;
      },
      execute: () => 1,
    });
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore());
    ctx.github.owner = 'later';
    await (w.t.execute as Exec)({}, { toolCallId: 'c', messages: [] });
    expect(seen).toEqual(['later', 'mine', JSON.stringify(ctx), Object.keys(ctx).join()]);
    expect(JSON.stringify(ctx)).toBe(before.replace('acme', 'later'));
    expect(Object.isFrozen(ctx)).toBe(false);
    expect(Object.getOwnPropertyNames(ctx).sort()).toEqual(['artifacts', 'github', 'run', 'signal', 'state']);
  });

  it.each<[string, unknown, RegExp]>([
    ['a 0.1 RunContext', { runId: 'r', agent: 'a', trigger: undefined }, /has no run.*looks like a 0\.1 RunContext/],
    ['an empty run id', { run: { runId: '' }, state: {}, artifacts: {} }, /ctx\.run\.runId is an empty string/],
    ['a numeric run id', { run: { runId: 7 }, state: {}, artifacts: {} }, /ctx\.run\.runId is number/],
    ['no context at all', undefined, /the context is undefined/],
  ])('%s is refused when the tools are wrapped, with InvalidToolContextError', (_what, ctx, message) => {
    const t = defineEffectTool({ inputSchema: z.object({}), execute: () => 1 });
    let error: unknown;
    try {
      wrapToolsForRun({ t }, ctx as ToolContext, new MemoryEffectStore());
    } catch (e) {
      error = e;
    }
    expect(InvalidToolContextError.isInstance(error)).toBe(true);
    expect((error as InvalidToolContextError).retryable).toBe(false);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/^wrapToolsForRun: .*createToolContext\(/);
  });

  it('a context made by createToolContext is handed to the hooks as the very same object', () => {
    const ctx = createToolContext({ runId: 'r', agent: 'a' });
    expect(guardToolContext(ctx, 'test')).toBe(ctx);
    const view = guardToolContext(plainCtx('r'), 'test');
    expect(guardToolContext(view, 'test')).toBe(view);
  });
});
