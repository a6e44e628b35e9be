// Real AI SDK tool loops (generateText with MockLanguageModelV4), through runAgent and through
// generateText + wrapToolsForRun.
import { describe, expect, it } from '@jest/globals';
import { generateText, isStepCount } from 'ai';
import { z } from 'zod';
import {
  defineAgent,
  defineEffectTool,
  effectMarker,
  runAgent,
  stepIndex,
  type IEffectStore,
} from '../../src/index.js';
import { LegacyContextFieldError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import { FakeTracker, FlakyStore, makeCtx, scriptedModel, silentLogger, type ScriptedStep } from './helpers.js';

/** A comment tool keyed by run, issue and model step, embedding the marker, reconciling by it. */
function stepKeyedComment(tracker: FakeTracker) {
  const keyOf = (runId: string, issue: number, messages: readonly { role: string }[]) =>
    `${runId}:comment:${issue}:${stepIndex({ messages })}`;
  return defineEffectTool({
    description: 'Posts a comment on the issue.',
    inputSchema: z.object({ issue: z.number(), body: z.string() }),
    effectKey: ({ issue }, ctx, { messages }) => keyOf(ctx.run.runId, issue, messages),
    alreadyApplied: async (key, { issue }) => tracker.findByMarker(issue, key)?.id,
    execute: async ({ issue, body }, { context, messages }) =>
      tracker.post(issue, `${body}\n\n${effectMarker(keyOf(context.run.runId, issue, messages))}`).id,
  });
}

/** A comment tool with the default key, reconciling by marker. */
function defaultKeyedComment(tracker: FakeTracker) {
  return defineEffectTool({
    inputSchema: z.object({ issue: z.number(), body: z.string() }),
    alreadyApplied: async (key, { issue }) => tracker.findByMarker(issue, key)?.id,
    execute: async ({ issue, body }, { context }) => {
      const { defaultEffectKey } = await import('../../src/index.js');
      return tracker.post(
        issue,
        `${body}\n${effectMarker(defaultEffectKey(context.run.runId, 'comment', { issue, body }))}`,
      ).id;
    },
  });
}

const twoIdenticalCalls: ScriptedStep[] = [
  {
    calls: [
      { toolName: 'comment', input: { issue: 1, body: 'same' } },
      { toolName: 'comment', input: { issue: 1, body: 'same' } },
    ],
  },
  { text: 'done' },
];

async function loopWithWrapped(script: ScriptedStep[], tracker: FakeTracker, store: IEffectStore, runId: string) {
  const ctx = makeCtx(runId);
  const tools = wrapToolsForRun({ comment: defaultKeyedComment(tracker) }, ctx, store, undefined, {
    logger: silentLogger,
  });
  return generateText({
    model: scriptedModel(script),
    tools,
    toolsContext: { comment: ctx },
    prompt: 'go',
    stopWhen: isStepCount(5),
  });
}

describe('AI SDK loop through runAgent', () => {
  it('two identical tool calls in one step apply once, and both get the result', async () => {
    const tracker = new FakeTracker();
    const agent = defineAgent({
      name: 'dup',
      model: scriptedModel(twoIdenticalCalls),
      tools: { comment: defaultKeyedComment(tracker) },
    });
    const res = await runAgent(agent, { prompt: 'go', store: new MemoryEffectStore(), runId: 'r-dup' });
    expect(tracker.posts).toBe(1);
    expect(res.steps[0]?.toolResults.map((r): unknown => r.output)).toEqual([1, 1]);
    expect(res.effects.map((e) => e.outcome).sort()).toEqual(['executed', 'recorded']);
    expect(res.text).toBe('done');
  });

  it('running the same agent twice with the same runId and store applies each effect once', async () => {
    const tracker = new FakeTracker();
    const store = new MemoryEffectStore();
    const script: ScriptedStep[] = [
      { calls: [{ toolName: 'comment', input: { issue: 1, body: 'a' } }] },
      { calls: [{ toolName: 'comment', input: { issue: 2, body: 'b' } }] },
      { text: 'done' },
    ];
    const mk = () =>
      defineAgent({ name: 'twice', model: scriptedModel(script), tools: { comment: stepKeyedComment(tracker) } });
    const first = await runAgent(mk(), { prompt: 'go', store, runId: 'r-twice' });
    const second = await runAgent(mk(), { prompt: 'go', store, runId: 'r-twice' });
    expect(tracker.posts).toBe(2);
    expect(first.effects.map((e) => e.outcome)).toEqual(['executed', 'executed']);
    expect(second.effects.map((e) => e.outcome)).toEqual(['recorded', 'recorded']);
    expect(second.effects.map((e) => e.key)).toEqual(first.effects.map((e) => e.key));
    // a new run (new runId) is a new run: it applies its effects again
    const third = await runAgent(mk(), { prompt: 'go', store, runId: 'r-other' });
    expect(third.effects.map((e) => e.outcome)).toEqual(['executed', 'executed']);
  });

  it('a redone step keyed by stepIndex keeps its key: the second run, with a different body, finds the earlier marker', async () => {
    const tracker = new FakeTracker();
    const comment = stepKeyedComment(tracker);
    const run = (body: string, store: IEffectStore) =>
      runAgent(
        defineAgent({
          name: 'redo',
          model: scriptedModel([{ calls: [{ toolName: 'comment', input: { issue: 4, body } }] }, { text: 'ok' }]),
          tools: { comment },
        }),
        { prompt: 'go', store, runId: 'r-redo', logger: silentLogger },
      );
    const store = new FlakyStore();
    store.failWrites = 1; // the crash: the comment is posted, its record never written
    const first = await run('Thanks for the report!', store);
    const second = await run('Thank you, looking into it.', store);
    expect(first.effects[0]).toMatchObject({ outcome: 'executed', recordPending: true });
    expect(second.effects[0]).toMatchObject({ outcome: 'reconciled', key: first.effects[0]?.key });
    expect(tracker.comments).toHaveLength(1);
    expect(tracker.comments[0]?.body).toMatch(/^Thanks for the report!/);
    expect(second.steps[0]?.toolResults[0]?.output).toBe(1);
  });

  it('the crash window: the store write fails after the effect, the next run reconciles through alreadyApplied, one remote effect', async () => {
    const tracker = new FakeTracker();
    const store = new FlakyStore();
    const comment = defaultKeyedComment(tracker);
    const mk = () =>
      defineAgent({
        name: 'crash',
        model: scriptedModel([{ calls: [{ toolName: 'comment', input: { issue: 9, body: 'hi' } }] }, { text: 'ok' }]),
        tools: { comment },
      });
    store.failWrites = 1;
    const first = await runAgent(mk(), { prompt: 'go', store, runId: 'r-crash', logger: silentLogger });
    const second = await runAgent(mk(), { prompt: 'go', store, runId: 'r-crash', logger: silentLogger });
    const third = await runAgent(mk(), { prompt: 'go', store, runId: 'r-crash', logger: silentLogger });
    expect(first.effects.map((e) => e.outcome)).toEqual(['executed']);
    expect(second.effects.map((e) => e.outcome)).toEqual(['reconciled']);
    expect(third.effects.map((e) => e.outcome)).toEqual(['recorded']);
    expect(tracker.posts).toBe(1);
  });

  it('migration: a tool using the 0.1-style ctx.runId fails the run loudly, naming ctx.run.runId, and applies nothing', async () => {
    let executed = 0;
    const legacy = defineEffectTool({
      inputSchema: z.object({ issue: z.number() }),
      effectKey: ({ issue }, ctx) => `${(ctx as unknown as { runId: string }).runId}:comment:${issue}`,
      execute: () => ++executed,
    });
    const agent = defineAgent({
      name: 'legacy',
      model: scriptedModel([{ calls: [{ toolName: 'legacy', input: { issue: 1 } }] }, { text: 'ok' }]),
      tools: { legacy },
    });
    const outcome = await runAgent(agent, { prompt: 'go', store: new MemoryEffectStore(), runId: 'r' }).catch(
      (e: unknown) => e,
    );
    expect(LegacyContextFieldError.isInstance(outcome)).toBe(true);
    expect((outcome as Error).message).toContain('ctx.run.runId');
    expect(executed).toBe(0);
  });
});

describe('AI SDK loop through generateText + wrapToolsForRun', () => {
  it('two identical tool calls in one step apply once', async () => {
    const tracker = new FakeTracker();
    const result = await loopWithWrapped(twoIdenticalCalls, tracker, new MemoryEffectStore(), 'g-dup');
    expect(tracker.posts).toBe(1);
    expect(result.steps[0]?.toolResults.map((r): unknown => r.output)).toEqual([1, 1]);
  });

  it('the crash window: a failed store write, then the next loop reconciles through alreadyApplied; one remote effect', async () => {
    const tracker = new FakeTracker();
    const store = new FlakyStore();
    const script: ScriptedStep[] = [
      { calls: [{ toolName: 'comment', input: { issue: 2, body: 'x' } }] },
      { text: 'ok' },
    ];
    store.failWrites = 1;
    await loopWithWrapped(script, tracker, store, 'g-crash');
    const again = await loopWithWrapped(script, tracker, store, 'g-crash');
    expect(tracker.posts).toBe(1);
    expect(again.steps[0]?.toolResults[0]?.output).toBe(1);
  });

  it('a redone step keyed by stepIndex keeps its key across a regenerated body (second step of the loop)', async () => {
    const tracker = new FakeTracker();
    const ctx = makeCtx('g-redo');
    const tools = wrapToolsForRun({ comment: stepKeyedComment(tracker) }, ctx, new MemoryEffectStore());
    const loop = (body: string) =>
      generateText({
        model: scriptedModel([
          { calls: [{ toolName: 'comment', input: { issue: 1, body: 'step zero' } }] },
          { calls: [{ toolName: 'comment', input: { issue: 1, body } }] },
          { text: 'ok' },
        ]),
        tools,
        toolsContext: { comment: ctx },
        prompt: 'go',
        stopWhen: isStepCount(5),
      });
    await loop('first draft');
    // the record of the whole run is lost (fresh wrap, fresh store): only the markers remain
    const freshTools = wrapToolsForRun({ comment: stepKeyedComment(tracker) }, ctx, new MemoryEffectStore());
    await generateText({
      model: scriptedModel([
        { calls: [{ toolName: 'comment', input: { issue: 1, body: 'step zero, reworded' } }] },
        { calls: [{ toolName: 'comment', input: { issue: 1, body: 'second draft' } }] },
        { text: 'ok' },
      ]),
      tools: freshTools,
      toolsContext: { comment: ctx },
      prompt: 'go',
      stopWhen: isStepCount(5),
    });
    expect(tracker.comments.map((c) => c.body.split('\n')[0])).toEqual(['step zero', 'first draft']);
  });
});
