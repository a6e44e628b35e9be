// defineAgent's AI SDK 7 agent settings without Temporal: what it accepts, what it refuses (and
// says why), a ToolLoopAgent's settings, the steps rebuilt from a conversation, the in-process runner.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hasToolCall, isStepCount, Output, tool, ToolLoopAgent, type ToolLoopAgentSettings } from 'ai';
import { z } from 'zod';
import { defineAgent, defineEffectTool, runAgent, type AgentSettingName } from '../../src/index.js';
import { isEffectTool } from '../../src/effects/define-effect-tool.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { UnsupportedAgentSettingError } from '../../src/errors/unsupported-agent-setting-error.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { stepHistory } from '../../activities/step-history.js';
import { stopConditionMet } from '../../activities/stop-conditions.js';
import { stepLimitField } from '../../activities/stopped-step.js';
import type { JsonMessage } from '../../common/index.js';
import {
  CALLBACK_SETTINGS,
  LOOP_SETTINGS,
  OWN_FIELDS,
  PASSED_SETTINGS,
  REFUSED_SETTINGS,
} from '../../src/agent/agent-setting-names.js';

/** Every setting defineAgent knows: run, steered, its own, refused (with why). */
type Classified =
  | (typeof PASSED_SETTINGS)[number]
  | (typeof LOOP_SETTINGS)[number]
  | (typeof OWN_FIELDS)[number]
  | (typeof CALLBACK_SETTINGS)[number]
  | keyof typeof REFUSED_SETTINGS;
/** Compiles only while every AgentSettingName is run or steered. */
const everyNameClassified: [
  Exclude<AgentSettingName, (typeof PASSED_SETTINGS)[number] | (typeof LOOP_SETTINGS)[number]>,
] extends [never]
  ? true
  : false = true;
/** Compiles only while every ToolLoopAgentSettings key of the installed `ai` is classified (a new SDK setting must be). */
const everySettingClassified: [Exclude<keyof ToolLoopAgentSettings, Classified>] extends [never] ? true : false = true;

const model = scriptedModel([{ text: 'Hi.' }]);
const note = tool({ description: 'Notes.', inputSchema: z.object({ text: z.string() }), execute: () => 'ok' });

/** The error `define` throws, for assertions on its kind and message. */
function refusal(define: () => unknown): UnsupportedAgentSettingError {
  try {
    define();
  } catch (error) {
    if (UnsupportedAgentSettingError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('defineAgent accepted the definition');
}

describe('defineAgent with AI SDK 7 agent settings', () => {
  it('keeps the settings it runs, and maxSteps: 20 by default, none with stopWhen (as ToolLoopAgent)', () => {
    const plain = defineAgent({ name: 'plain', model });
    expect(plain.maxSteps).toBe(20);
    expect(plain.settings).toEqual({});
    const stopping = defineAgent({ name: 'stopping', model, temperature: 0, stopWhen: hasToolCall('done') });
    expect(stopping.maxSteps).toBe(Infinity);
    // The model step's answer is JSON (Infinity would become null there): an unbounded agent's limit is left out.
    expect(stepLimitField(stopping)).toEqual({});
    expect(stepLimitField(plain)).toEqual({ agentMaxSteps: 20 });
    expect(stopping.settings.temperature).toBe(0);
    expect(defineAgent({ name: 'both', model, stopWhen: isStepCount(3), maxSteps: 5 }).maxSteps).toBe(5);
  });

  it.each([
    ['onStepFinish', { onStepFinish: () => undefined }, 'run again on every retry'],
    ['onEnd', { onEnd: () => undefined }, 'run again on every retry'],
    ['maxRetries', { maxRetries: 3 }, 'Temporal retries a failed model step'],
    ['timeout', { timeout: 10_000 }, 'only { stepMs, firstChunkMs, chunkMs }'],
    ['timeout', { timeout: { totalMs: 5 } }, 'got totalMs'],
    ['toolsContext', { toolsContext: {} }, "the run's ToolContext"],
    ['toolCallConcurrency', { toolCallConcurrency: 1 }, 'all at once'],
    ['prepareCall', { prepareCall: () => ({}) }, 'no call options'],
    ['stopWhen', { stopWhen: [isStepCount(2), 3] }, 'stop condition 1 is a number'],
    ['temprature', { temprature: 0 }, 'a typo?'],
  ])('refuses %s with UnsupportedAgentSettingError naming it', (setting, extra, why) => {
    const error = refusal(() => defineAgent({ name: 'refused', model, ...(extra as object) }));
    expect(error.name).toBe('UnsupportedAgentSettingError');
    expect(error.setting).toBe(setting);
    expect(error.message).toContain(`defineAgent("refused"): the setting "${setting}"`);
    expect(error.message).toContain(why);
  });

  it('counts a setting set to undefined as absent, and takes timeout per model call and maxRetries 0', () => {
    const agent = defineAgent({
      name: 'lenient',
      model,
      onEnd: undefined,
      timeout: { stepMs: 1000 },
      maxRetries: 0,
    } as never);
    expect(agent.settings).toEqual({ timeout: { stepMs: 1000 }, maxRetries: 0 });
  });

  it('takes a ToolLoopAgent (its id as the name) or its settings object, with its settings', () => {
    const output = Output.object({ schema: z.object({ a: z.string() }) });
    const settings = { id: 'from-sdk', model, instructions: 'Be kind.', tools: { note }, temperature: 0.2, output };
    const fromAgent = defineAgent({ agent: new ToolLoopAgent(settings) });
    expect(fromAgent.name).toBe('from-sdk');
    expect(fromAgent.instructions).toBe('Be kind.');
    expect(Object.keys(fromAgent.tools)).toEqual(['note']);
    expect(fromAgent.settings).toEqual({ temperature: 0.2, output });
    const fromSettings = defineAgent({ name: 'renamed', agent: settings, maxSteps: 4 });
    expect([fromSettings.name, fromSettings.maxSteps, fromSettings.settings.temperature]).toEqual(['renamed', 4, 0.2]);
    // A ToolLoopAgent's callbacks are refused as the settings' would be.
    const withCallback = new ToolLoopAgent({ ...settings, onStepFinish: () => undefined });
    const callbackRefused = refusal(() => defineAgent({ agent: withCallback }));
    expect(callbackRefused.setting).toBe('onStepFinish');
    // ... saying how to keep the ToolLoopAgent and run it here without the callback.
    expect(callbackRefused.message).toContain('defineAgent({ agent: { ...settings, onStepFinish: undefined } })');
    const built = { ...settings, onStepFinish: () => undefined };
    expect(defineAgent({ agent: { ...built, onStepFinish: undefined } }).settings).toEqual(
      defineAgent({ agent: settings }).settings,
    );
    // A definition of its own has no ToolLoopAgent to keep: no such advice.
    expect(
      refusal(() => defineAgent({ name: 'own', model, onStepFinish: () => undefined } as never)).message,
    ).not.toContain('...settings');
    // A settings object whose tools read a context (effect tools read the run's ToolContext) type-checks
    // without the toolsContext the SDK's own type asks for, and its effect tools keep their brand.
    const post = defineEffectTool({
      description: 'Posts.',
      inputSchema: z.object({ body: z.string() }),
      execute: ({ body }) => Promise.resolve({ body }),
    });
    const withEffect = defineAgent({ agent: { id: 'poster', model, tools: { post } } });
    expect(isEffectTool(withEffect.tools.post)).toBe(true);
    expect(() => defineAgent({ agent: new ToolLoopAgent(settings), temperature: 1 } as never)).toThrow(
      'with agent, only name and maxSteps may be given (got temperature)',
    );
  });

  it('says to pass the settings object when a ToolLoopAgent keeps no settings where AI SDK 7.0 does', () => {
    const agent = new ToolLoopAgent({ id: 'hidden', model });
    Object.defineProperty(agent, 'settings', { value: undefined });
    expect(refusal(() => defineAgent({ agent })).message).toContain('pass the settings object you built it from');
  });
});

describe("the docs' Agent settings table", () => {
  it('names every setting defineAgent runs or refuses', () => {
    expect([everySettingClassified, everyNameClassified]).toEqual([true, true]);
    const section = readFileSync(
      fileURLToPath(new URL('../../docs/reference/agent-settings.md', import.meta.url)),
      'utf8',
    );
    const rows = section.split('\n').filter((line) => line.startsWith('| `') || line.startsWith('| callbacks'));
    const named = new Set(
      rows.flatMap((row) => [...(row.split(' | ')[0] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1])),
    );
    const known = [
      ...PASSED_SETTINGS,
      ...LOOP_SETTINGS,
      ...OWN_FIELDS.filter((f) => f !== 'id' && f !== 'experimental_telemetry'),
      ...Object.keys(REFUSED_SETTINGS),
      ...CALLBACK_SETTINGS.filter(
        (c) => !c.startsWith('experimental_') && !/^on(LanguageModelCall|ToolExecution)End$/.test(c),
      ),
    ].filter((setting) => setting !== 'experimental_repairToolCall');
    expect(known.filter((setting) => !named.has(setting))).toEqual([]);
  });
});

describe('the steps a stop condition and prepareStep see, rebuilt from the conversation', () => {
  const messages: JsonMessage[] = [
    { role: 'user', content: 'earlier chat' },
    { role: 'assistant', content: 'an answer before this run' },
    { role: 'user', content: 'Go.' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Noting.' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'note', input: { text: 'a' } },
        { type: 'tool-call', toolCallId: 'c2', toolName: 'fail', input: {} },
      ],
    },
    {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'note', output: { type: 'json', value: { saved: true } } },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'fail', output: { type: 'error-text', value: 'down' } },
      ],
    },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c3', toolName: 'done', input: {} }] },
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c3', toolName: 'done', output: { type: 'text', value: 'ok' } }],
    },
  ];

  it("splits the run's steps off the messages it began with, with calls, results and errors", () => {
    const { steps, initialMessages, responseMessages } = stepHistory(messages, 2);
    expect(initialMessages).toHaveLength(3);
    expect(responseMessages).toHaveLength(4);
    expect(steps.map((s) => s.stepNumber)).toEqual([0, 1]);
    expect(steps[0]).toMatchObject({ text: 'Noting.', finishReason: 'tool-calls' });
    expect(steps[0]!.toolCalls.map((c): unknown[] => [c.toolName, c.input])).toEqual([
      ['note', { text: 'a' }],
      ['fail', {}],
    ]);
    expect(steps[0]!.toolResults.map((r): unknown[] => [r.toolName, r.input, r.output])).toEqual([
      ['note', { text: 'a' }, { saved: true }],
    ]);
    expect(steps[0]!.content.find((p) => p.type === 'tool-error')).toMatchObject({ toolName: 'fail', error: 'down' });
    expect(steps[1]!.toolResults.map((r): unknown => r.output)).toEqual(['ok']);
    expect(stepHistory(messages, 0).steps).toEqual([]);
    // Usage is not kept, and reading it is said (the model step logs a warning).
    let reads = 0;
    const counted = stepHistory(messages, 2, { onUsageRead: () => reads++, runtimeContext: { tenant: 't' } });
    expect(counted.steps[0]!.usage.totalTokens).toBeUndefined();
    expect(reads).toBe(1);
    expect(counted.steps[1]!.runtimeContext).toEqual({ tenant: 't' });
  });

  it("evaluates the SDK's stop conditions on them as the SDK does", async () => {
    const { steps } = stepHistory(messages, 2);
    expect(await stopConditionMet(hasToolCall('done'), steps)).toBe(true);
    expect(await stopConditionMet(hasToolCall('note'), steps)).toBe(false); // only the last step counts
    expect(await stopConditionMet([isStepCount(3), isStepCount(2)], steps)).toBe(true);
    expect(await stopConditionMet(async () => Promise.resolve(false), steps)).toBe(false);
    expect(await stopConditionMet(undefined, steps)).toBe(false);
  });
});

describe('runAgent (in process) with agent settings', () => {
  it('hands them to the AI SDK loop: stopWhen, output and call settings', async () => {
    const seen: number[] = [];
    const recorded = scriptedModel([
      { toolCalls: [{ toolName: 'note', input: { text: 'a' } }] },
      { text: '{"a":"b"}' },
    ]);
    const inner = recorded.doGenerate.bind(recorded);
    recorded.doGenerate = (options) => {
      seen.push(options.temperature ?? -1);
      return inner(options);
    };
    const agent = defineAgent({
      name: 'local',
      model: recorded,
      tools: { note },
      temperature: 0.7,
      output: Output.object({ schema: z.object({ a: z.string() }) }),
    });
    const result = await runAgent(agent, { prompt: 'Go.', store: new MemoryEffectStore() });
    expect(result.output).toEqual({ a: 'b' });
    expect(seen).toEqual([0.7, 0.7]);

    const stopped = defineAgent({
      name: 'stopped',
      model: scriptedModel([{ toolCalls: [{ toolName: 'note', input: { text: 'a' } }] }]),
      tools: { note },
      stopWhen: hasToolCall('note'),
    });
    const stoppedRun = await runAgent(stopped, { prompt: 'Go.', store: new MemoryEffectStore() });
    expect(stoppedRun.steps).toHaveLength(1);
    expect(stoppedRun.output).toBeUndefined();
  });
});
