import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { tool } from 'ai';
import { z } from 'zod';
import { AgentRegistry } from '../../activities/agent-registry.js';
import { withFailureMapping } from '../../activities/failures.js';
import { assertNoStrayHooks } from '../../src/effects/define-effect-tool.js';
import {
  defaultEffectKey,
  defineAgent,
  defineEffectTool,
  effectKeyOf,
  effectMarker,
  findEffectMarkers,
  runAgent,
  stepIndex,
} from '../../src/index.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { InvalidEffectKeyError, InvalidEffectToolError, UnsupportedJsonValueError } from '../../src/errors/errors.js';
import { isEffectTool } from '../../src/effects/define-effect-tool.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import { callOptions, makeCtx, PlainStore, scriptedModel } from './helpers.js';

describe('defaultEffectKey', () => {
  it('is <runId>:<toolName>:<sha256 hex of the canonical JSON input>', () => {
    const hex = createHash('sha256').update('{"a":[1,{"b":2,"c":3}]}').digest('hex');
    const key = defaultEffectKey('run-9', 'comment', { a: [1, { c: 3, b: 2 }] });
    expect(key).toBe(`run-9:comment:${hex}`);
    expect(key).toMatch(/^run-9:comment:[0-9a-f]{64}$/);
  });

  it('never contains the input itself, only its hash', () => {
    expect(defaultEffectKey('r', 't', { secret: 'hunter2' })).not.toContain('hunter2');
  });

  it('throws the TypeError of canonicalJson for BigInt input', () => {
    expect(() => defaultEffectKey('r', 't', { n: 1n })).toThrow(TypeError);
  });

  it('NaN and null no longer share a key: a NaN input fails the call before the store or execute is touched', async () => {
    let executed = 0;
    const t = defineEffectTool({ inputSchema: z.any(), execute: () => ++executed });
    const ctx = makeCtx('r');
    const store = new PlainStore();
    const w = wrapToolsForRun({ t }, ctx, store);
    const run = w.t.execute as (i: unknown, o: unknown) => Promise<unknown>;
    await run({ v: null }, callOptions(ctx));
    await expect(run({ v: NaN }, callOptions(ctx))).rejects.toThrow(/NaN at \$\.v has no faithful JSON form/);
    await expect(run({ v: new Map() }, callOptions(ctx))).rejects.toThrow(UnsupportedJsonValueError);
    expect(executed).toBe(1);
    expect(store.gets + store.puts).toBe(2); // the null call's read and write only
  });

  it('an input without a faithful JSON form still works with a custom effectKey (the fix the error names)', async () => {
    const t = defineEffectTool({
      inputSchema: z.any(),
      effectKey: (input: { when: Date }, ctx) => `${ctx.run.runId}:t:${String(input.when.getTime())}`,
      execute: () => 'done',
    });
    const ctx = makeCtx('r');
    const store = new MemoryEffectStore();
    const w = wrapToolsForRun({ t }, ctx, store);
    const run = w.t.execute as (i: unknown, o: unknown) => Promise<unknown>;
    await expect(run({ when: new Date('invalid') }, callOptions(ctx))).resolves.toBe('done');
    expect(await store.get('r:t:NaN')).toBeDefined();
  });

  it('on a Temporal worker the rejection is not retried: the activity failure is non-retryable, typed UnsupportedJsonValueError', async () => {
    const failure = await withFailureMapping(async () => defaultEffectKey('r', 't', { v: Infinity })).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).nonRetryable).toBe(true);
    expect((failure as ApplicationFailure).type).toBe('UnsupportedJsonValueError');
  });
});

describe('custom effectKey', () => {
  it.each([
    ['an empty string', ''],
    ['a number', 42],
    ['undefined', undefined],
    ['null', null],
    ['an object', { key: 'k' }],
  ])('returning %s throws InvalidEffectKeyError before anything runs', async (_name, bad) => {
    let executed = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => bad as string,
      execute: () => ++executed,
    });
    const ctx = makeCtx();
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore());
    const call = (w.t.execute as (i: unknown, o: unknown) => Promise<unknown>)({}, callOptions(ctx));
    await expect(call).rejects.toThrow(InvalidEffectKeyError);
    await expect((w.t.execute as (i: unknown, o: unknown) => Promise<unknown>)({}, callOptions(ctx))).rejects.toThrow(
      /effectKey of tool "t" returned/,
    );
    expect(executed).toBe(0);
  });

  it('may be async', async () => {
    const store = new MemoryEffectStore();
    const t = defineEffectTool({ inputSchema: z.object({}), effectKey: async () => 'async-key', execute: () => 1 });
    const ctx = makeCtx();
    const w = wrapToolsForRun({ t }, ctx, store);
    await (w.t.execute as (i: unknown, o: unknown) => Promise<unknown>)({}, callOptions(ctx));
    expect(await store.get('async-key')).toBeDefined();
  });
});

describe('defineEffectTool', () => {
  it('throws InvalidEffectToolError at definition time when execute is missing', () => {
    expect(() => defineEffectTool({ description: 'no execute', inputSchema: z.object({}) } as never)).toThrow(
      InvalidEffectToolError,
    );
    expect(() => defineEffectTool({ inputSchema: z.object({}), execute: 'nope' } as never)).toThrow(
      /execute is missing/,
    );
  });

  it('throws at definition time when a hook is not a function, or the definition is not an object', () => {
    expect(() => defineEffectTool({ inputSchema: z.object({}), execute: () => 1, effectKey: 'k' } as never)).toThrow(
      /effectKey must be a function/,
    );
    expect(() =>
      defineEffectTool({ inputSchema: z.object({}), execute: () => 1, alreadyApplied: true } as never),
    ).toThrow(/alreadyApplied must be a function/);
    expect(() => defineEffectTool(undefined as never)).toThrow(InvalidEffectToolError);
  });

  it('does not mutate the definition it was given', () => {
    const def = { inputSchema: z.object({}), execute: () => 1 };
    const t = defineEffectTool(def);
    expect(t).not.toBe(def);
    expect(isEffectTool(def)).toBe(false);
  });

  it('brands tools with Symbol.for, so a tool branded by another copy of the library ("another realm") is recognised', async () => {
    const foreign = Object.defineProperty(
      { inputSchema: z.object({}), execute: () => 'foreign' },
      Symbol.for('@chamvi/temporal/effect-tool'),
      { value: true },
    );
    expect(isEffectTool(foreign)).toBe(true);
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const w = wrapToolsForRun({ foreign }, ctx, store);
    expect(w.foreign).not.toBe(foreign); // it was wrapped
    await (w.foreign.execute as unknown as (i: unknown, o: unknown) => Promise<unknown>)({}, callOptions(ctx));
    expect(await store.get(defaultEffectKey('r', 'foreign', {}))).toBeDefined();
  });

  it('does not take a lookalike for an effect tool (no brand, a truthy non-true brand, tool() output)', () => {
    expect(isEffectTool(tool({ inputSchema: z.object({}), execute: () => 1 }))).toBe(false);
    expect(isEffectTool({ [Symbol.for('@chamvi/temporal/effect-tool')]: 'yes' })).toBe(false);
    expect(isEffectTool({ [Symbol('@chamvi/temporal/effect-tool')]: true })).toBe(false);
    expect(isEffectTool(null)).toBe(false);
    expect(isEffectTool('tool')).toBe(false);
  });
});

describe('a copy of an effect tool', () => {
  const comment = () =>
    defineEffectTool({
      description: 'Post a comment',
      inputSchema: z.object({ issue: z.number() }),
      effectKey: ({ issue }, ctx) => `${ctx.run.runId}:comment:${issue}`,
      alreadyApplied: async () => undefined,
      execute: () => 'posted',
    });

  it('a spread keeps the brand: { ...commentTool, description } is an effect tool and runs the protocol', async () => {
    const commentTool = comment();
    // The cast: AI SDK 7's Tool union rejects any spread of a tool without one.
    const renamed = { ...commentTool, description: 'Post a comment on the issue' } as typeof commentTool;
    expect(isEffectTool(renamed)).toBe(true);
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const w = wrapToolsForRun({ renamed }, ctx, store);
    await (w.renamed.execute as (i: unknown, o: unknown) => Promise<unknown>)({ issue: 3 }, callOptions(ctx));
    expect(await store.get('r:comment:3')).toBeDefined();
    // The brand is a symbol key: JSON never shows it.
    expect(JSON.stringify({ ...commentTool, inputSchema: undefined })).toBe('{"description":"Post a comment"}');
  });

  const stripped = () => {
    const { description, inputSchema, effectKey, alreadyApplied, execute } = comment();
    return { description, inputSchema, effectKey, alreadyApplied, execute };
  };

  it('a copy without the brand but with effectKey/alreadyApplied is refused by defineAgent, naming the tool and the fix', () => {
    const commentTool = stripped();
    expect(isEffectTool(commentTool)).toBe(false);
    let error: unknown;
    try {
      defineAgent({ name: 'triage', model: 'm', tools: { commentTool } });
    } catch (e) {
      error = e;
    }
    expect(InvalidEffectToolError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /defineAgent\("triage"\): tool "commentTool" has effectKey and alreadyApplied but is not an effect tool/,
    );
    expect((error as Error).message).toContain("defineEffectTool({ ...commentTool, description: '…' })");
  });

  it('a tool() given only alreadyApplied is refused too (it would run execute with no protocol)', () => {
    const t = tool({ inputSchema: z.object({}), execute: () => 1, alreadyApplied: async () => 1 } as never);
    expect(() => defineAgent({ name: 'a', model: 'm', tools: { t } })).toThrow(/tool "t" has alreadyApplied but/);
  });

  it('wrapToolsForRun and runAgent refuse it before any call, so nothing runs unprotected', async () => {
    let executed = 0;
    const copy = { ...stripped(), execute: () => ++executed };
    expect(() => wrapToolsForRun({ copy }, makeCtx(), new MemoryEffectStore())).toThrow(
      /wrapToolsForRun: tool "copy" has effectKey and alreadyApplied/,
    );
    // An agent assembled by hand (not through defineAgent) reaches runAgent's wrapping.
    const agent = { ...defineAgent({ name: 'a', model: scriptedModel([{ text: 'x' }]) }), tools: { copy } };
    await expect(runAgent(agent, { prompt: 'p', store: new MemoryEffectStore() })).rejects.toThrow(
      InvalidEffectToolError,
    );
    expect(executed).toBe(0);
  });

  it('a worker refuses to register an agent holding such a tool (on Temporal it would run at-least-once)', () => {
    const agent = { ...defineAgent({ name: 'a', model: 'm' }), tools: { copy: stripped() } };
    expect(() => new AgentRegistry([agent])).toThrow(/worker: agent "a": tool "copy" has effectKey and alreadyApplied/);
    expect(() => new AgentRegistry([{ agent }])).toThrow(InvalidEffectToolError);
  });

  it('plain tools without hooks, effect tools and wrapped effect tools are all accepted', () => {
    const plain = tool({ inputSchema: z.object({}), execute: () => 1 });
    const commentTool = comment();
    const wrapped = wrapToolsForRun({ commentTool }, makeCtx(), new MemoryEffectStore()).commentTool;
    expect(Object.keys(wrapped)).not.toContain('effectKey');
    expect(() => defineAgent({ name: 'a', model: 'm', tools: { plain, commentTool, wrapped } })).not.toThrow();
    expect(
      () => new AgentRegistry([defineAgent({ name: 'b', model: 'm', tools: { plain, commentTool } })]),
    ).not.toThrow();
  });
});

describe('stepIndex', () => {
  it('counts the assistant messages in options.messages', () => {
    expect(stepIndex({ messages: [] })).toBe(0);
    expect(stepIndex({ messages: [{ role: 'system' }, { role: 'user' }] })).toBe(0);
    expect(
      stepIndex({
        messages: [{ role: 'user' }, { role: 'assistant' }, { role: 'tool' }, { role: 'assistant' }, { role: 'tool' }],
      }),
    ).toBe(2);
  });
});

describe('effectKeyOf', () => {
  it('execute reads the same key the protocol recorded under, custom or default, so its marker matches', async () => {
    const posted: string[] = [];
    const custom = defineEffectTool({
      inputSchema: z.object({ issue: z.number() }),
      effectKey: ({ issue }, ctx) => `${ctx.run.runId}:comment:${issue}`,
      execute: async (_input, options) => {
        posted.push(effectMarker(effectKeyOf(options)));
        return 'ok';
      },
    });
    const plain = defineEffectTool({
      inputSchema: z.object({ n: z.number() }),
      execute: async (_input, options) => effectKeyOf(options),
    });
    const ctx = createToolContext({ runId: 'run-k', agent: 'a' });
    const store = new MemoryEffectStore();
    const tools = wrapToolsForRun({ custom, plain }, ctx, store);
    const opts = { toolCallId: 'c1', messages: [], context: ctx };
    await (tools.custom.execute as (i: unknown, o: unknown) => Promise<unknown>)({ issue: 4 }, opts);
    const defaultKey = await (tools.plain.execute as (i: unknown, o: unknown) => Promise<unknown>)({ n: 1 }, opts);
    expect(findEffectMarkers(posted.join(''))).toEqual(['run-k:comment:4']);
    expect(defaultKey).toBe(defaultEffectKey('run-k', 'plain', { n: 1 }));
  });

  it('an unwrapped execute has no key, and effectKeyOf says so', () => {
    expect(() => effectKeyOf({ toolCallId: 'x', messages: [] })).toThrow(/carry no effect key/);
  });
});

describe('defining an effect tool', () => {
  it('refuses null or a non-object with an InvalidEffectToolError that says what it expects', () => {
    for (const definition of [null, undefined, 'comment']) {
      expect(() => defineEffectTool(definition as never)).toThrow(
        new InvalidEffectToolError('defineEffectTool expects a tool definition object (the same as tool() takes).'),
      );
    }
  });

  it('isEffectTool answers false for anything that is not an object, without throwing', () => {
    for (const value of [undefined, null, 'tool', 1]) expect(isEffectTool(value)).toBe(false);
  });

  it('the stray-hook check leaves alone values that are no tool object at all (other checks name them)', () => {
    for (const value of [undefined, null, 'tool']) expect(() => assertNoStrayHooks('t', value, 'here')).not.toThrow();
  });

  it('a stray-hook refusal names the hooks in each sentence of its fix, not just the first', () => {
    const copy = { execute: () => 1, effectKey: () => 'k', alreadyApplied: () => undefined };
    expect(() => assertNoStrayHooks('copy', copy, 'here')).toThrow(
      /ignoring effectKey and alreadyApplied\. .*or drop effectKey and alreadyApplied if it has no effect to guard\.$/,
    );
  });
});
