// What an effect tool's hooks learn about the call they serve: `ctx.effect` (the key, the claim's
// fence, the step) on the context alreadyApplied and execute get, read back by effectKeyOf,
// effectFenceOf and stepIndex; visible (enumerable), so a spread or a log keeps it.
import { describe, expect, it } from '@jest/globals';
import type { ToolExecutionOptions } from 'ai';
import { z } from 'zod';
import {
  defineEffectTool,
  effectFenceOf,
  effectKeyOf,
  stepIndex,
  type IEffectStore,
  type ToolContext,
} from '../../src/index.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { callOptions, makeCtx, PlainStore, silentLogger } from './helpers.js';

type Options = ToolExecutionOptions<ToolContext>;

/** Runs one call of a tool that keeps what its hooks got; `options` builds the call options for the run's context. */
async function seenBy(store: IEffectStore, options: (ctx: ToolContext) => Options = callOptions, step?: number) {
  const seen: { keyed?: ToolContext; checked?: ToolContext; executed?: Options } = {};
  const ctx = makeCtx('run-c');
  const tool = defineEffectTool({
    inputSchema: z.object({ n: z.number() }),
    effectKey: ({ n }, c) => ((seen.keyed = c), `${c.run.runId}:c:${n}`),
    alreadyApplied: async (_key, _input, c) => void (seen.checked = c),
    execute: async (_input, o) => ((seen.executed = o), 'done'),
  });
  await applyEffect(
    { tool, toolName: 't', input: { n: 1 }, ctx, options: options(ctx), ...(step !== undefined ? { step } : {}) },
    { store, logger: silentLogger },
  );
  return { ctx, ...seen };
}

describe('ctx.effect', () => {
  it('alreadyApplied and execute get one context for the call: the run’s, with the key, the fence and the step', async () => {
    const assistant = { role: 'assistant' as const, content: 'earlier step' };
    const { ctx, keyed, checked, executed } = await seenBy(new MemoryEffectStore(), (c) =>
      callOptions(c, {
        messages: [{ role: 'user', content: 'go' }, assistant, { role: 'tool', content: [] }, assistant],
      }),
    );
    expect(checked).toBe(executed?.context);
    expect(checked?.effect).toStrictEqual({ key: 'run-c:c:1', fence: 1, step: 2 });
    expect(checked?.run).toBe(ctx.run);
    expect(checked?.state).toBe(ctx.state);
    expect(checked?.artifacts).toBe(ctx.artifacts);
    // effectKey computes the key: it gets the run's context itself, without ctx.effect.
    expect(keyed).toBe(ctx);
    expect(keyed?.effect).toBeUndefined();
  });

  it('has no fence on a store without claims', async () => {
    const { executed } = await seenBy(new PlainStore());
    // Not even as an undefined field: a spread or a log shows only what the call has.
    expect(executed?.context.effect).toStrictEqual({ key: 'run-c:c:1', step: 0 });
    expect(effectFenceOf(executed ?? {})).toBeUndefined();
  });

  it('is enumerable: a spread of the options, or of the context, keeps it, and it shows in JSON', async () => {
    const { executed } = await seenBy(new MemoryEffectStore());
    const options = executed ?? ({} as Options);
    expect(effectKeyOf({ ...options })).toBe('run-c:c:1');
    expect(effectFenceOf({ ...options, context: { ...options.context } })).toBe(1);
    expect(JSON.parse(JSON.stringify(options.context))).toMatchObject({ effect: { key: 'run-c:c:1', fence: 1 } });
    expect(Object.isFrozen(options.context.effect)).toBe(true);
  });

  it('takes the step the caller knows, and execute then needs not read the messages', async () => {
    let reads = 0;
    const lazy = (ctx: ToolContext): Options => {
      const options = { toolCallId: 'lazy', context: ctx };
      Object.defineProperty(options, 'messages', {
        enumerable: true,
        get: () => {
          reads++;
          return [];
        },
      });
      return options as Options;
    };
    const { executed } = await seenBy(new MemoryEffectStore(), lazy, 7);
    expect(executed?.context.effect?.step).toBe(7);
    expect(stepIndex(executed ?? { messages: [] })).toBe(7);
    // The options reach execute with their getter, not its value.
    expect(reads).toBe(0);
    expect(typeof Object.getOwnPropertyDescriptor(executed, 'messages')?.get).toBe('function');
  });
});

describe('a run nested in an effect call', () => {
  it("counts its own steps: the outer call's ctx.effect does not key its effects, whether its context is passed on or spread", async () => {
    const store = new MemoryEffectStore();
    const applied: string[] = [];
    const inner = defineEffectTool({
      inputSchema: z.object({ text: z.string() }),
      effectKey: (_input, c, o) => `${c.run.runId}:inner:${stepIndex(o)}`,
      execute: async ({ text }) => (applied.push(text), text),
    });
    const outer = defineEffectTool({
      inputSchema: z.object({ spread: z.boolean() }),
      effectKey: ({ spread }, c) => `${c.run.runId}:outer:${spread}`,
      execute: async ({ spread }, o) => {
        const nested = wrapToolsForRun({ inner }, spread ? { ...o.context } : o.context, store);
        const execute = nested.inner.execute as (input: { text: string }, options: Options) => Promise<unknown>;
        const assistant = { role: 'assistant' as const, content: 'step' };
        await execute({ text: `${spread} step 0` }, callOptions(o.context, { messages: [] }));
        await execute({ text: `${spread} step 1` }, callOptions(o.context, { messages: [assistant] }));
        return 'nested';
      },
    });
    for (const spread of [false, true]) {
      const ctx = makeCtx(`run-nested-${spread}`);
      const options = callOptions(ctx, { messages: [{ role: 'assistant', content: 'a' }] });
      await applyEffect(
        { tool: outer, toolName: 'outer', input: { spread }, ctx, options },
        { store, logger: silentLogger },
      );
    }
    expect(applied).toEqual(['false step 0', 'false step 1', 'true step 0', 'true step 1']);
  });
});

describe('the readers of ctx.effect', () => {
  it('effectKeyOf refuses options that did not come through the protocol, naming where the key lives', () => {
    for (const options of [
      {},
      { context: null },
      { context: makeCtx('r') },
      { context: { effect: null } },
      { context: { effect: { key: 1 } } },
    ]) {
      expect(() => effectKeyOf(options)).toThrow(/carry no effect key \(options\.context\.effect\.key\)/);
    }
  });

  it('effectFenceOf answers undefined for anything but a number at options.context.effect.fence', () => {
    expect(effectFenceOf({ context: { effect: { fence: '3' } } })).toBeUndefined();
    expect(effectFenceOf({ context: 'not a context' })).toBeUndefined();
    expect(effectFenceOf({ context: { effect: { fence: 3 } } })).toBe(3);
  });

  it('stepIndex reads ctx.effect.step when there is one, else counts the assistant messages (none without messages)', () => {
    expect(stepIndex({ messages: [{ role: 'assistant' }], context: { effect: { step: 4 } } } as never)).toBe(4);
    expect(stepIndex({ messages: [{ role: 'assistant' }], context: { effect: { step: '4' } } } as never)).toBe(1);
    expect(stepIndex({} as never)).toBe(0);
  });
});
