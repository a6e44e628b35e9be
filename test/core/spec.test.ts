// One test (or more) per sentence of ../shared/spec/effect-tools-and-reconciliation.txt, in its order.
// Each describe block is a section of the spec; each test name states the behaviour it proves.
import { describe, expect, it } from '@jest/globals';
import { generateText, isStepCount, tool, type ToolExecutionOptions } from 'ai';
import { z } from 'zod';
import {
  defaultEffectKey,
  defineAgent,
  defineEffectTool,
  effectMarker,
  findEffectMarkers,
  runAgent,
  stepIndex,
  type EffectCallReport,
  type ToolContext,
} from '../../src/index.js';
import { canonicalJson } from '../../src/json/canonical-json.js';
import { isEffectTool } from '../../src/effects/define-effect-tool.js';
import { LegacyContextFieldError, ToolNotAllowedError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import {
  callOptions,
  captureLogger,
  collect,
  FakeTracker,
  FlakyStore,
  makeCtx,
  PlainStore,
  scriptedModel,
  silentLogger,
} from './helpers.js';

type Exec<I> = (input: I, options: ToolExecutionOptions<ToolContext>) => unknown;
const run = <I>(t: { execute?: unknown }, input: I, options: ToolExecutionOptions<ToolContext>) =>
  (t.execute as Exec<I>)(input, options);

/** The spec's own example, against a fake tracker. */
function specCommentTool(tracker: FakeTracker) {
  return defineEffectTool({
    description: 'Posts a comment on the issue.',
    inputSchema: z.object({ issue: z.number(), body: z.string() }),
    effectKey: ({ issue }, ctx) => `${ctx.run.runId}:comment:${issue}`,
    alreadyApplied: async (key, { issue }) => tracker.findByMarker(issue, key)?.id,
    execute: async ({ issue, body }, { context }) =>
      tracker.post(issue, `${body}\n${effectMarker(`${context.run.runId}:comment:${issue}`)}`).id,
  });
}

describe('spec: effect tools', () => {
  it('an effect tool is an AI SDK tool whose side effect applies at most once per effect key', async () => {
    const tracker = new FakeTracker();
    const comment = specCommentTool(tracker);
    const ctx = makeCtx('r');
    const tools = wrapToolsForRun({ comment }, ctx, new MemoryEffectStore());
    // usable by generateText like any tool
    const result = await generateText({
      model: scriptedModel([
        { calls: [{ toolName: 'comment', input: { issue: 1, body: 'a' } }] },
        { calls: [{ toolName: 'comment', input: { issue: 1, body: 'b' } }] },
        { text: 'done' },
      ]),
      tools,
      toolsContext: { comment: ctx },
      prompt: 'go',
      stopWhen: isStepCount(5),
    });
    expect(result.text).toBe('done');
    expect(tracker.posts).toBe(1);
  });

  it('defineEffectTool takes the same definition as tool(), and both hooks are optional', async () => {
    const def = {
      description: 'd',
      inputSchema: z.object({ x: z.number() }),
      title: 'T',
      strict: true,
      execute: async ({ x }: { x: number }) => x * 2,
    };
    const plain = tool(def);
    const effect = defineEffectTool(def);
    for (const k of ['description', 'inputSchema', 'title', 'strict', 'execute'] as const) {
      expect(effect[k]).toBe(plain[k]);
    }
    expect(isEffectTool(effect)).toBe(true);
    expect(isEffectTool(plain)).toBe(false);
    const wrapped = wrapToolsForRun({ effect }, makeCtx(), new MemoryEffectStore());
    await expect(run(wrapped.effect, { x: 2 }, callOptions(makeCtx()))).resolves.toBe(4);
  });

  it("the spec's example (comment keyed by run and issue, marker, alreadyApplied) runs as written", async () => {
    const tracker = new FakeTracker();
    const responder = defineAgent({
      name: 'responder',
      model: scriptedModel([
        { calls: [{ toolName: 'comment', input: { issue: 7, body: 'Hi!' } }] },
        { calls: [{ toolName: 'comment', input: { issue: 7, body: 'Hello again' } }] },
        { text: 'answered' },
      ]),
      instructions: 'Answer new issues.',
      tools: { comment: specCommentTool(tracker) },
    });
    const res = await runAgent(responder, { prompt: 'new issue 7', store: new MemoryEffectStore(), runId: 'r-ex' });
    expect(res.text).toBe('answered');
    expect(tracker.comments).toHaveLength(1);
    expect(tracker.comments[0]?.body).toBe('Hi!\n<!-- chamvi:effect=r-ex:comment:7 -->');
    expect(res.effects.map((e) => e.outcome)).toEqual(['executed', 'recorded']);
  });
});

describe('spec: what happens on every call', () => {
  it('the engine wraps every effect tool of a run (and leaves the agent definition untouched)', async () => {
    let a = 0;
    let b = 0;
    const ta = defineEffectTool({ inputSchema: z.object({}), execute: async () => ++a });
    const tb = defineEffectTool({ inputSchema: z.object({}), execute: async () => ++b });
    const agent = defineAgent({
      name: 'two',
      model: scriptedModel([
        {
          calls: [
            { toolName: 'ta', input: {} },
            { toolName: 'tb', input: {} },
          ],
        },
        {
          calls: [
            { toolName: 'ta', input: {} },
            { toolName: 'tb', input: {} },
          ],
        },
        { text: 'ok' },
      ]),
      tools: { ta, tb },
    });
    const res = await runAgent(agent, { prompt: 'x', store: new MemoryEffectStore(), runId: 'r' });
    expect([a, b]).toEqual([1, 1]);
    expect(res.effects.map((e) => `${e.toolName}:${e.outcome}`).sort()).toEqual([
      'ta:executed',
      'ta:recorded',
      'tb:executed',
      'tb:recorded',
    ]);
    expect(agent.tools.ta).toBe(ta);
  });

  it('computes the effect key for each call (effectKey runs on every call, with that call input)', async () => {
    const seen: unknown[] = [];
    const t = defineEffectTool({
      inputSchema: z.object({ n: z.number() }),
      effectKey: (input, ctx) => {
        seen.push(input);
        return `${ctx.run.runId}:${input.n}`;
      },
      execute: async ({ n }) => n,
    });
    const ctx = makeCtx('r');
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore());
    await run(w.t, { n: 1 }, callOptions(ctx));
    await run(w.t, { n: 2 }, callOptions(ctx));
    await run(w.t, { n: 1 }, callOptions(ctx));
    expect(seen).toEqual([{ n: 1 }, { n: 2 }, { n: 1 }]);
  });

  it('1. recorded result: a key the store holds returns its result and runs neither alreadyApplied nor execute', async () => {
    const calls: string[] = [];
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => 'k',
      alreadyApplied: async () => {
        calls.push('alreadyApplied');
        return undefined;
      },
      execute: async () => {
        calls.push('execute');
        return 'fresh';
      },
    });
    const store = new MemoryEffectStore();
    await store.put('k', { toolName: 't', result: { stored: true }, origin: 'executed' });
    const ctx = makeCtx();
    const w = wrapToolsForRun({ t }, ctx, store);
    await expect(run(w.t, {}, callOptions(ctx))).resolves.toEqual({ stored: true });
    expect(calls).toEqual([]);
  });

  it('2. remote check: without a record, alreadyApplied is asked before execute, with the key, input and ctx', async () => {
    const calls: unknown[] = [];
    const ctx = makeCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({ a: z.number() }),
      effectKey: () => 'key-1',
      alreadyApplied: async (key, input, c) => {
        calls.push(['alreadyApplied', key, input, c.run === ctx.run && c.state === ctx.state]);
        return undefined;
      },
      execute: async () => {
        calls.push('execute');
        return 1;
      },
    });
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore());
    await run(w.t, { a: 1 }, callOptions(ctx));
    expect(calls).toEqual([['alreadyApplied', 'key-1', { a: 1 }, true], 'execute']);
  });

  it.each([
    ['an object', { id: 3 }],
    ['null', null],
    ['false', false],
    ['0', 0],
    ['an empty string', ''],
  ])(
    '2. an alreadyApplied answer other than undefined (%s) is recorded as reconciled and returned; execute never runs',
    async (_name, answer) => {
      let executed = 0;
      const t = defineEffectTool({
        inputSchema: z.object({}),
        effectKey: () => 'k',
        alreadyApplied: async () => answer,
        execute: async (): Promise<unknown> => {
          executed++;
          return 'x';
        },
      });
      const store = new MemoryEffectStore();
      const ctx = makeCtx();
      const reports: EffectCallReport[] = [];
      const w = wrapToolsForRun({ t }, ctx, store, undefined, { onReport: (r) => reports.push(r) });
      await expect(run(w.t, {}, callOptions(ctx))).resolves.toEqual(answer);
      expect(executed).toBe(0);
      const record = await store.get('k');
      expect(record?.origin).toBe('reconciled');
      expect(record?.result).toEqual(answer);
      expect(reports[0]?.outcome).toBe('reconciled');
      // and it is a record: the next call does not even ask the remote again
      await expect(run(w.t, {}, callOptions(ctx))).resolves.toEqual(answer);
      expect(reports[1]?.outcome).toBe('recorded');
    },
  );

  it('3. execute: without a record and without a remote effect, execute runs and its result is recorded', async () => {
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({ v: z.string() }),
      alreadyApplied: async () => undefined,
      execute: async ({ v }) => ({ echoed: v }),
    });
    const w = wrapToolsForRun({ t }, ctx, store);
    await expect(run(w.t, { v: 'x' }, callOptions(ctx))).resolves.toEqual({ echoed: 'x' });
    const record = await store.get(defaultEffectKey('r', 't', { v: 'x' }));
    expect(record).toMatchObject({ result: { echoed: 'x' }, origin: 'executed', toolName: 't' });
    expect(typeof record?.recordedAt).toBe('string');
  });

  it('a throwing execute records nothing, so a later retry applies the effect', async () => {
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    let attempts = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        if (++attempts === 1) throw new Error('remote 503');
        return 'applied';
      },
    });
    const w = wrapToolsForRun({ t }, ctx, store);
    await expect(run(w.t, {}, callOptions(ctx))).rejects.toThrow('remote 503');
    expect(await store.get(defaultEffectKey('r', 't', {}))).toBeUndefined();
    await expect(run(w.t, {}, callOptions(ctx))).resolves.toBe('applied');
    expect(attempts).toBe(2);
  });

  it('a throwing alreadyApplied records nothing and does not execute, so a later retry can still apply the effect', async () => {
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    let checks = 0;
    let executed = 0;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      alreadyApplied: async () => {
        if (++checks === 1) throw new Error('remote unreadable');
        return undefined;
      },
      execute: async () => ++executed,
    });
    const w = wrapToolsForRun({ t }, ctx, store);
    await expect(run(w.t, {}, callOptions(ctx))).rejects.toThrow('remote unreadable');
    expect(executed).toBe(0);
    expect(await store.get(defaultEffectKey('r', 't', {}))).toBeUndefined();
    await expect(run(w.t, {}, callOptions(ctx))).resolves.toBe(1);
  });

  // On a get/put store without claims only the in-process sharing keeps the second and third
  // identical call from reading "not recorded" and applying the effect again.
  it('parallel identical calls within one step share one application in process, even on a store without claims', async () => {
    let executed = 0;
    const t = defineEffectTool({
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        executed++;
        await new Promise((r) => setTimeout(r, 5));
        return n;
      },
    });
    const ctx = makeCtx();
    const reports: EffectCallReport[] = [];
    const store = new PlainStore();
    const w = wrapToolsForRun({ t }, ctx, store, undefined, { onReport: (r) => reports.push(r) });
    const results = await Promise.all([1, 1, 1].map((n) => run(w.t, { n }, callOptions(ctx))));
    expect(results).toEqual([1, 1, 1]);
    expect(executed).toBe(1);
    expect(store.gets).toBe(1);
    expect(reports.map((r) => r.outcome).sort()).toEqual(['executed', 'recorded', 'recorded']);
  });
});

describe('spec: effect keys', () => {
  it('the default key is <ctx.run.runId>:<toolName>:<sha256 of the canonical JSON input>', async () => {
    const { createHash } = await import('node:crypto');
    const store = new MemoryEffectStore();
    const ctx = makeCtx('run-42');
    const postNote = defineEffectTool({ inputSchema: z.object({ b: z.number(), a: z.string() }), execute: () => 1 });
    const w = wrapToolsForRun({ postNote }, ctx, store);
    await run(w.postNote, { b: 1, a: 'x' }, callOptions(ctx));
    const hash = createHash('sha256').update('{"a":"x","b":1}').digest('hex');
    expect(await store.get(`run-42:postNote:${hash}`)).toBeDefined();
    expect(defaultEffectKey('run-42', 'postNote', { a: 'x', b: 1 })).toBe(`run-42:postNote:${hash}`);
  });

  it('canonical JSON sorts object keys, drops undefined and serialises toJSON values such as Date through toJSON', () => {
    const date = new Date('2024-01-02T03:04:05.000Z');
    expect(canonicalJson({ b: 1, a: { d: undefined, c: date } })).toBe('{"a":{"c":"2024-01-02T03:04:05.000Z"},"b":1}');
    expect(defaultEffectKey('r', 't', { a: 1, b: undefined })).toBe(defaultEffectKey('r', 't', { a: 1 }));
    expect(defaultEffectKey('r', 't', { when: date })).toBe(defaultEffectKey('r', 't', { when: date.toISOString() }));
  });

  it('inputs with BigInt or cycles are not supported: the call fails with a TypeError and nothing runs', async () => {
    let executed = 0;
    const t = defineEffectTool({ inputSchema: z.any(), execute: () => ++executed });
    const ctx = makeCtx();
    const store = new PlainStore();
    const w = wrapToolsForRun({ t }, ctx, store);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    await expect(run(w.t, { n: 1n }, callOptions(ctx))).rejects.toThrow(TypeError);
    await expect(run(w.t, cyclic, callOptions(ctx))).rejects.toThrow(/cyclic/);
    expect(executed).toBe(0);
    expect(store.gets + store.puts).toBe(0);
  });

  it('with the default key, the same call with the same input in the same run is applied once (another input or run applies again)', async () => {
    let executed = 0;
    const t = defineEffectTool({ inputSchema: z.object({ n: z.number() }), execute: () => ++executed });
    const store = new MemoryEffectStore();
    const r1 = makeCtx('run-a');
    const r2 = makeCtx('run-b');
    const w1 = wrapToolsForRun({ t }, r1, store);
    const w2 = wrapToolsForRun({ t }, r2, store);
    expect(await run(w1.t, { n: 1 }, callOptions(r1))).toBe(1);
    expect(await run(w1.t, { n: 1 }, callOptions(r1))).toBe(1);
    expect(await run(w1.t, { n: 2 }, callOptions(r1))).toBe(2);
    expect(await run(w2.t, { n: 1 }, callOptions(r2))).toBe(3);
    expect(executed).toBe(3);
  });

  it('a custom effectKey makes "the same effect" mean something else: one comment per run and issue whatever the body says', async () => {
    const tracker = new FakeTracker();
    const ctx = makeCtx('r');
    const w = wrapToolsForRun({ comment: specCommentTool(tracker) }, ctx, new MemoryEffectStore());
    const first = await run(w.comment, { issue: 1, body: 'one' }, callOptions(ctx));
    const second = await run(w.comment, { issue: 1, body: 'two' }, callOptions(ctx));
    await run(w.comment, { issue: 2, body: 'two' }, callOptions(ctx));
    expect(second).toBe(first);
    expect(tracker.comments.map((c) => [c.issue, c.body.split('\n')[0]])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
  });

  it('effectKey and alreadyApplied get the same ToolContext as execute (run.runId, run.trigger, state, artifacts)', async () => {
    const seen: Record<string, ToolContext> = {};
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: (_i, ctx) => {
        seen['effectKey'] = ctx;
        return `${ctx.run.runId}:${String((ctx.run.trigger as { issue: number }).issue)}:${String(ctx.state['n'])}`;
      },
      alreadyApplied: async (_k, _i, ctx) => {
        seen['alreadyApplied'] = ctx;
        return undefined;
      },
      execute: async (_i, { context }) => {
        seen['execute'] = context;
        return context.artifacts['doc'];
      },
    });
    const agent = defineAgent({
      name: 'ctx-agent',
      model: scriptedModel([{ calls: [{ toolName: 't', input: {} }] }, { text: 'ok' }]),
      tools: { t },
    });
    const res = await runAgent(agent, {
      prompt: 'x',
      store: new MemoryEffectStore(),
      runId: 'r-ctx',
      trigger: { issue: 9 },
      state: { n: 3 },
      artifacts: { doc: 'README' },
    });
    expect(res.effects[0]?.key).toBe('r-ctx:9:3');
    expect(seen['effectKey']).toBeDefined();
    // The same run, state and artifacts; alreadyApplied and execute get one context for the call.
    for (const field of ['run', 'state', 'artifacts'] as const) {
      expect(seen['alreadyApplied']?.[field]).toBe(seen['effectKey']?.[field]);
      expect(seen['execute']?.[field]).toBe(seen['effectKey']?.[field]);
    }
    expect(seen['execute']).toBe(seen['alreadyApplied']);
    expect(seen['execute']?.run).toMatchObject({ runId: 'r-ctx', trigger: { issue: 9 }, agent: 'ctx-agent' });
    expect(res.steps[0]?.toolResults[0]?.output).toBe('README');
  });

  it('the third argument of effectKey is the AI SDK call options (toolCallId, messages)', async () => {
    const seen: ToolExecutionOptions<ToolContext>[] = [];
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: (_i, ctx, options) => {
        seen.push(options);
        return `${ctx.run.runId}:${options.toolCallId}`;
      },
      execute: () => 1,
    });
    const agent = defineAgent({
      name: 'opts',
      model: scriptedModel([{ calls: [{ toolName: 't', input: {}, id: 'call-xyz' }] }, { text: 'ok' }]),
      tools: { t },
    });
    const res = await runAgent(agent, { prompt: 'hello', store: new MemoryEffectStore(), runId: 'r' });
    expect(seen[0]?.toolCallId).toBe('call-xyz');
    expect(seen[0]?.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(res.effects[0]?.key).toBe('r:call-xyz');
  });

  it('key by model step: a regenerated step with a different body keeps the same number of assistant messages', async () => {
    const keys: string[] = [];
    const t = defineEffectTool({
      inputSchema: z.object({ issue: z.number(), body: z.string() }),
      effectKey: ({ issue }, ctx, options) => {
        const key = `${ctx.run.runId}:comment:${issue}:${stepIndex(options)}`;
        keys.push(key);
        return key;
      },
      execute: () => 'posted',
    });
    const script = (body: string) => [
      { calls: [{ toolName: 'note', input: { issue: 1, body: 'first step' } }] },
      { calls: [{ toolName: 'note', input: { issue: 1, body } }] },
      { text: 'ok' },
    ];
    const mk = (body: string) => defineAgent({ name: 'steps', model: scriptedModel(script(body)), tools: { note: t } });
    await runAgent(mk('draft A'), { prompt: 'p', store: new MemoryEffectStore(), runId: 'r' });
    await runAgent(mk('draft B, regenerated'), { prompt: 'p', store: new MemoryEffectStore(), runId: 'r' });
    expect(keys).toEqual(['r:comment:1:0', 'r:comment:1:1', 'r:comment:1:0', 'r:comment:1:1']);
  });

  it('a key such as ${runId}:comment:${issue}:${step} finds the earlier marker even though the text changed', async () => {
    const tracker = new FakeTracker();
    const comment = defineEffectTool({
      inputSchema: z.object({ issue: z.number(), body: z.string() }),
      effectKey: ({ issue }, ctx, options) => `${ctx.run.runId}:comment:${issue}:${stepIndex(options)}`,
      alreadyApplied: async (key, { issue }) => tracker.findByMarker(issue, key)?.id,
      execute: async ({ issue, body }, { context, messages }) =>
        tracker.post(
          issue,
          `${body}\n${effectMarker(`${context.run.runId}:comment:${issue}:${stepIndex({ messages })}`)}`,
        ).id,
    });
    // first attempt: the comment is posted, then the record is lost (a fresh store = crash before the write)
    const first = defineAgent({
      name: 'a',
      model: scriptedModel([{ calls: [{ toolName: 'comment', input: { issue: 3, body: 'v1' } }] }, { text: 'ok' }]),
      tools: { comment },
    });
    await runAgent(first, { prompt: 'p', store: new MemoryEffectStore(), runId: 'run-s' });
    const redo = defineAgent({
      name: 'a',
      model: scriptedModel([
        { calls: [{ toolName: 'comment', input: { issue: 3, body: 'v2 differs' } }] },
        { text: 'ok' },
      ]),
      tools: { comment },
    });
    const res = await runAgent(redo, { prompt: 'p', store: new MemoryEffectStore(), runId: 'run-s' });
    expect(res.effects.map((e) => e.outcome)).toEqual(['reconciled']);
    expect(tracker.comments).toHaveLength(1);
    expect(tracker.comments[0]?.body.startsWith('v1')).toBe(true);
  });
});

describe('spec: the crash window', () => {
  it('the result is recorded after execute returns (not before, not while it runs)', async () => {
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const key = defaultEffectKey('r', 't', {});
    let duringExecute: unknown = 'unset';
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        duringExecute = await store.get(key);
        return 'v';
      },
    });
    const w = wrapToolsForRun({ t }, ctx, store);
    await run(w.t, {}, callOptions(ctx));
    expect(duringExecute).toBeUndefined();
    expect((await store.get(key))?.result).toBe('v');
  });

  it('a crash between the side effect and the store write leaves no record, so without alreadyApplied the retry applies it again', async () => {
    const tracker = new FakeTracker();
    const store = new FlakyStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({ issue: z.number() }),
      execute: async ({ issue }) => tracker.post(issue, 'hi').id,
    });
    const w = wrapToolsForRun({ t }, ctx, store, undefined, { logger: silentLogger });
    store.failWrites = 1;
    await run(w.t, { issue: 1 }, callOptions(ctx));
    expect(await store.get(defaultEffectKey('r', 't', { issue: 1 }))).toBeUndefined();
    await run(w.t, { issue: 1 }, callOptions(ctx));
    expect(tracker.posts).toBe(2); // the hazard alreadyApplied exists for
  });

  it('alreadyApplied closes that window: it checks the remote system before acting', async () => {
    const tracker = new FakeTracker();
    const store = new FlakyStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({ issue: z.number() }),
      alreadyApplied: async (key, { issue }) => tracker.findByMarker(issue, key)?.id,
      execute: async ({ issue }) =>
        tracker.post(issue, `hi ${effectMarker(defaultEffectKey(ctx.run.runId, 't', { issue }))}`).id,
    });
    const w = wrapToolsForRun({ t }, ctx, store, undefined, { logger: silentLogger });
    store.failWrites = 1;
    const first = await run(w.t, { issue: 1 }, callOptions(ctx));
    const second = await run(w.t, { issue: 1 }, callOptions(ctx));
    expect(tracker.posts).toBe(1);
    expect(second).toBe(first);
  });

  it('effectMarker(key) returns the hidden HTML comment <!-- chamvi:effect=<key> -->', () => {
    expect(effectMarker('run-1:comment:7')).toBe('<!-- chamvi:effect=run-1:comment:7 -->');
  });

  it('a marker embedded in what the tool creates (a comment, a PR description) is found again in that text', () => {
    const key = 'run-1:openPr:abc';
    const description = `## Fix\n\nChanges things.\n\n${effectMarker(key)}\n`;
    expect(findEffectMarkers(description)).toEqual([key]);
  });

  it('set semantics: a label tool needs no reconciliation, re-adding after a lost record changes nothing', async () => {
    const labels = new Set<string>();
    const store = new FlakyStore();
    const ctx = makeCtx('r');
    const label = defineEffectTool({
      inputSchema: z.object({ name: z.string() }),
      execute: async ({ name }) => {
        labels.add(name);
        return [...labels];
      },
    });
    const w = wrapToolsForRun({ label }, ctx, store, undefined, { logger: silentLogger });
    store.failWrites = 1;
    await run(w.label, { name: 'bug' }, callOptions(ctx));
    await run(w.label, { name: 'bug' }, callOptions(ctx));
    expect([...labels]).toEqual(['bug']);
  });

  it('remote state: alreadyApplied compares a remote ref before pushing, so a lost record does not push twice', async () => {
    const remote = { ref: 'aaa', pushes: 0 };
    const store = new FlakyStore();
    const ctx = makeCtx('r');
    const push = defineEffectTool({
      inputSchema: z.object({ from: z.string(), to: z.string() }),
      alreadyApplied: async (_k, { to }) => (remote.ref === to ? { ref: to } : undefined),
      execute: async ({ from, to }) => {
        if (remote.ref !== from) throw new Error('non-fast-forward'); // compare-and-swap
        remote.ref = to;
        remote.pushes++;
        return { ref: to };
      },
    });
    const w = wrapToolsForRun({ push }, ctx, store, undefined, { logger: silentLogger });
    store.failWrites = 1;
    await run(w.push, { from: 'aaa', to: 'bbb' }, callOptions(ctx));
    await expect(run(w.push, { from: 'aaa', to: 'bbb' }, callOptions(ctx))).resolves.toEqual({ ref: 'bbb' });
    expect(remote.pushes).toBe(1);
  });

  it('idempotency keys: execute sends the effect key as Idempotency-Key and the API dedupes the retry', async () => {
    const api = { seen: new Map<string, number>(), charges: 0 };
    const charge = (idempotencyKey: string) => {
      const known = api.seen.get(idempotencyKey);
      if (known !== undefined) return known;
      api.seen.set(idempotencyKey, ++api.charges);
      return api.charges;
    };
    const store = new FlakyStore();
    const ctx = makeCtx('r');
    const pay = defineEffectTool({
      inputSchema: z.object({ cents: z.number() }),
      execute: async (input, { context }) => charge(defaultEffectKey(context.run.runId, 'pay', input)),
    });
    const w = wrapToolsForRun({ pay }, ctx, store, undefined, { logger: silentLogger });
    store.failWrites = 1;
    const a = await run(w.pay, { cents: 100 }, callOptions(ctx));
    const b = await run(w.pay, { cents: 100 }, callOptions(ctx));
    expect(a).toBe(b);
    expect(api.charges).toBe(1);
  });

  it('if recording fails after the effect, the call still succeeds, the failure is logged, and alreadyApplied guards the next retry', async () => {
    const tracker = new FakeTracker();
    const store = new FlakyStore();
    const ctx = makeCtx('r');
    const logger = captureLogger();
    const reports: EffectCallReport[] = [];
    const t = defineEffectTool({
      inputSchema: z.object({ issue: z.number() }),
      alreadyApplied: async (key, { issue }) => tracker.findByMarker(issue, key)?.id,
      execute: async ({ issue }) =>
        tracker.post(issue, `x ${effectMarker(defaultEffectKey(ctx.run.runId, 't', { issue }))}`).id,
    });
    const w = wrapToolsForRun({ t }, ctx, store, undefined, { logger, onReport: (r) => reports.push(r) });
    store.failWrites = 1;
    await expect(run(w.t, { issue: 5 }, callOptions(ctx))).resolves.toBe(1);
    expect(logger.messages.join('\n')).toMatch(/could not be recorded/);
    expect(reports[0]).toMatchObject({ outcome: 'executed', recordPending: true });
    await expect(run(w.t, { issue: 5 }, callOptions(ctx))).resolves.toBe(1);
    expect(reports[1]?.outcome).toBe('reconciled');
    expect(tracker.posts).toBe(1);
  });
});

describe('spec: outside the engine', () => {
  it('wrapToolsForRun applies the same wrapping in a custom loop (generateText with the wrapped tools)', async () => {
    let executed = 0;
    const t = defineEffectTool({ inputSchema: z.object({ n: z.number() }), execute: ({ n }) => (executed++, n) });
    const ctx = makeCtx('custom');
    const store = new MemoryEffectStore();
    const tools = wrapToolsForRun({ t }, ctx, store);
    const opts = (text: string) => ({
      model: scriptedModel([{ calls: [{ toolName: 't', input: { n: 1 } }] }, { text }]),
      tools,
      toolsContext: { t: ctx },
      prompt: 'x',
      stopWhen: isStepCount(3),
    });
    await generateText(opts('one'));
    await generateText(opts('two'));
    expect(executed).toBe(1);
  });

  it('store may be any IEffectStore: a bare get/put store without claims works', async () => {
    let executed = 0;
    const store = new PlainStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), execute: () => ++executed });
    const w = wrapToolsForRun({ t }, ctx, store);
    expect(await run(w.t, {}, callOptions(ctx))).toBe(1);
    expect(await run(w.t, {}, callOptions(ctx))).toBe(1);
    expect(executed).toBe(1);
    expect(store.records.size).toBe(1);
  });

  it('the optional allow(toolName) re-checks every call; a refused call throws ToolNotAllowedError', async () => {
    let allowed = true;
    let executed = 0;
    const t = defineEffectTool({ inputSchema: z.object({ n: z.number() }), execute: () => ++executed });
    const ctx = makeCtx();
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore(), () => allowed);
    await run(w.t, { n: 1 }, callOptions(ctx));
    allowed = false;
    await expect(run(w.t, { n: 2 }, callOptions(ctx))).rejects.toThrow(ToolNotAllowedError);
    // even a recorded call is refused once allow says no
    await expect(run(w.t, { n: 1 }, callOptions(ctx))).rejects.toThrow(ToolNotAllowedError);
    expect(executed).toBe(1);
  });

  it('tools that are not effect tools pass through unchanged', () => {
    const plain = tool({ inputSchema: z.object({}), execute: () => 1 });
    const w = wrapToolsForRun({ plain }, makeCtx(), new MemoryEffectStore());
    expect(w.plain).toBe(plain);
  });

  it('wrapped tools keep their contextSchema and forward the call options; pass the same ToolContext as context', async () => {
    const contextSchema = z
      .object({ run: z.object({ runId: z.string() }).passthrough() })
      .passthrough() as unknown as z.ZodType<ToolContext>;
    let got: ToolExecutionOptions<ToolContext> | undefined;
    const t = defineEffectTool({
      inputSchema: z.object({}),
      contextSchema,
      execute: (_i, options) => ((got = options), options.context.run.runId),
    });
    const ctx = makeCtx('r-cs');
    const w = wrapToolsForRun({ t }, ctx, new MemoryEffectStore());
    expect(w.t.contextSchema).toBe(contextSchema);
    const abort = new AbortController();
    const messages = [{ role: 'user' as const, content: 'hi' }];
    await run(w.t, {}, { toolCallId: 'tc-9', messages, abortSignal: abort.signal, context: ctx });
    expect(got?.toolCallId).toBe('tc-9');
    expect(got?.messages).toBe(messages);
    expect(got?.abortSignal).toBe(abort.signal);
    expect(got?.context.run).toBe(ctx.run);
    expect(got?.context.state).toBe(ctx.state);
  });
});

describe('spec: migrating from 0.1', () => {
  it('ctx.runId becomes ctx.run.runId (likewise agent, trigger, signal); the old fields throw naming the new ones', () => {
    const ctx = makeCtx('r', { trigger: 't' });
    for (const field of ['runId', 'agent', 'trigger', 'signal']) {
      expect(() => (ctx as unknown as Record<string, unknown>)[field]).toThrow(LegacyContextFieldError);
      expect(() => (ctx as unknown as Record<string, unknown>)[field]).toThrow(`ctx.run.${field}`);
    }
    expect(ctx.run.runId).toBe('r');
    expect(ctx.run.agent).toBe('tester');
    expect(ctx.run.trigger).toBe('t');
    expect(ctx.run.signal).toBeInstanceOf(AbortSignal);
  });

  it('an old ctx.runId in a custom key fails loudly instead of collapsing the key across runs', async () => {
    let executed = 0;
    const legacy = defineEffectTool({
      inputSchema: z.object({ issue: z.number() }),
      effectKey: ({ issue }, ctx) => `${String((ctx as unknown as { runId: string }).runId)}:comment:${issue}`,
      execute: () => ++executed,
    });
    const store = new MemoryEffectStore();
    for (const runId of ['run-1', 'run-2']) {
      const ctx = makeCtx(runId);
      const w = wrapToolsForRun({ legacy }, ctx, store);
      await expect(run(w.legacy, { issue: 1 }, callOptions(ctx))).rejects.toThrow(/ctx\.run\.runId/);
    }
    expect(executed).toBe(0);
  });

  it('defineEffectTool() requires execute', () => {
    expect(() => defineEffectTool({ inputSchema: z.object({}) } as never)).toThrow(/execute is missing/);
  });

  it('an effect tool defined at module scope serves every run, each call seeing its own run', async () => {
    const store = new MemoryEffectStore();
    const results: unknown[] = [];
    for (const runId of ['run-x', 'run-y']) {
      const ctx = makeCtx(runId);
      const w = wrapToolsForRun({ whoami: moduleScopeTool }, ctx, store);
      results.push(await run(w.whoami, {}, callOptions(ctx)));
    }
    expect(results).toEqual(['run-x', 'run-y']);
  });

  it('streaming tools work too: the last yielded value of an async iterable is the recorded result', async () => {
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    let runs = 0;
    const progress = defineEffectTool({
      inputSchema: z.object({}),
      async *execute() {
        runs++;
        yield { status: 'started' };
        yield { status: 'halfway' };
        yield { status: 'done', id: 1 };
      },
    });
    const w = wrapToolsForRun({ progress }, ctx, store);
    expect(await collect(run(w.progress, {}, callOptions(ctx)))).toEqual([
      { status: 'started' },
      { status: 'halfway' },
      { status: 'done', id: 1 },
    ]);
    expect((await store.get(defaultEffectKey('r', 'progress', {})))?.result).toEqual({ status: 'done', id: 1 });
    expect(await collect(run(w.progress, {}, callOptions(ctx)))).toEqual([{ status: 'done', id: 1 }]);
    expect(runs).toBe(1);
  });
});

const moduleScopeTool = defineEffectTool({
  inputSchema: z.object({}),
  execute: (_input, { context }) => context.run.runId,
});
