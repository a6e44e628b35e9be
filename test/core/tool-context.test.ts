import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  ChamviError,
  createToolContext,
  defineAgent,
  defineEffectTool,
  LegacyContextFieldError,
  MemoryEffectStore,
  runAgent,
  type ToolContext,
} from '../../src/index.js';
import { scriptedModel } from './helpers.js';

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

  it('hooks and execute get the same object, execute as options.context, even when the tool has a contextSchema that strips fields', async () => {
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
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).toBe(seen[0]);
    expect(() => (seen[2] as unknown as { runId: string }).runId).toThrow(LegacyContextFieldError);
  });
});
