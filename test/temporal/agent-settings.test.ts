// AI SDK 7 agent settings (ToolLoopAgent's names) on Temporal: each one reaches the model call of a
// model-step activity, or steers the workflow's loop, as the docs' "Agent settings" table says (docs/reference/agent-settings.md).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import proto from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import {
  hasToolCall,
  isStepCount,
  Output,
  tool,
  ToolLoopAgent,
  type StepResult,
  type ToolLoopAgentSettings,
  type Telemetry,
  type ToolSet,
} from 'ai';
import { z } from 'zod';
import { defineAgent, defineEffectTool, type Agent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import { scriptedModel, type ScriptEntry } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker, type AgentRegistration } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import type { AgentRunOutput } from '../../workflows/agent-loop.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** A scripted model that also records the options of every call it gets (generate or stream). */
function recordingModel(script: readonly ScriptEntry[], modelId = 'scripted') {
  const inner = scriptedModel(script, { modelId });
  const calls: LanguageModelV4CallOptions[] = [];
  const model: LanguageModelV4 = {
    specificationVersion: 'v4',
    provider: inner.provider,
    modelId: inner.modelId,
    supportedUrls: inner.supportedUrls,
    doGenerate: (options) => {
      calls.push(options);
      return inner.doGenerate(options);
    },
    doStream: (options) => {
      calls.push(options);
      return inner.doStream(options);
    },
  };
  return { model, calls };
}

/**
 * The bytes of every payload in a history (inputs, results, summaries): what the run's data adds,
 * without the timestamps and size counters whose varints differ from run to run.
 */
function payloadBytesOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  if (value instanceof Uint8Array) return 0;
  const record = value as Record<string, unknown>;
  if (record['data'] instanceof Uint8Array && 'metadata' in record) return record['data'].length;
  return Object.values(record).reduce<number>((sum, field) => sum + payloadBytesOf(field), 0);
}

/** Runs `agent` on a fresh task queue (and workflow id); its output and its history's size in bytes. */
async function runMeasured(agent: Agent): Promise<{ output: AgentRunOutput; bytes: number; payloadBytes: number }> {
  const taskQueue = `q-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [agent],
    store: new MemoryEffectStore(),
    workerOptions: { workflowBundle: bundle },
  });
  return worker.runUntil(async () => {
    const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Go.', taskQueue });
    const output = await handle.result();
    const history = await handle.fetchHistory();
    return {
      output,
      bytes: proto.temporal.api.history.v1.History.encode(history).finish().length,
      payloadBytes: payloadBytesOf(history),
    };
  });
}

/** Runs `agent` on a fresh task queue (and workflow id) and returns the run's output. */
async function run(
  agent: Agent,
  prompt = 'Go.',
  registration: Omit<AgentRegistration, 'agent'> = {},
): Promise<AgentRunOutput> {
  const taskQueue = `q-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [{ agent, ...registration }],
    store: new MemoryEffectStore(),
    workerOptions: { workflowBundle: bundle },
  });
  return worker.runUntil(async () => {
    const handle = await startAgentRun(env.client, { agent: agent.name, prompt, taskQueue });
    return handle.result();
  });
}

const systemOf = (call: LanguageModelV4CallOptions) =>
  call.prompt
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');

const toolNamesOf = (call: LanguageModelV4CallOptions) => (call.tools ?? []).map((t) => t.name).sort();

/** Tools whose calls the tests make: they answer at once. */
const tools = {
  note: tool({
    description: 'Notes something.',
    inputSchema: z.object({ text: z.string() }),
    execute: ({ text }) => `noted ${text}`,
  }),
  search: tool({ description: 'Searches.', inputSchema: z.object({ q: z.string() }), execute: () => 'nothing' }),
  finish: tool({ description: 'Ends the task.', inputSchema: z.object({}), execute: () => 'finished' }),
};

describe('agent settings on Temporal', () => {
  it('call settings, toolChoice, activeTools, providerOptions and headers reach every model call', async () => {
    // toolChoice 'required': every step calls a tool; `finish` ends the run (stopWhen).
    const { model, calls } = recordingModel([
      { toolCalls: [{ toolName: 'note', input: { text: 'a' } }] },
      { text: 'Done.', toolCalls: [{ toolName: 'finish', input: {} }] },
    ]);
    const agent = defineAgent({
      name: `settings-${randomUUID().slice(0, 8)}`,
      model,
      tools,
      stopWhen: hasToolCall('finish'),
      temperature: 0.3,
      maxOutputTokens: 123,
      topP: 0.9,
      topK: 7,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      stopSequences: ['STOP'],
      seed: 42,
      toolChoice: 'required',
      activeTools: ['note', 'finish'],
      providerOptions: { scripted: { cache: 'on' } },
      headers: { 'x-run': 'yes' },
    });
    const result = await run(agent);
    expect(result.text).toBe('Done.');
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call).toMatchObject({
        temperature: 0.3,
        maxOutputTokens: 123,
        topP: 0.9,
        topK: 7,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        stopSequences: ['STOP'],
        seed: 42,
        toolChoice: { type: 'required' },
        providerOptions: { scripted: { cache: 'on' } },
      });
      expect(call.headers?.['x-run']).toBe('yes');
      // activeTools: `search` is the agent's, but not offered to the model.
      expect(toolNamesOf(call)).toEqual(['finish', 'note']);
    }
  });

  it('toolOrder, reasoning, repairToolCall, experimental_refineToolInput and allowSystemInMessages act in the model step', async () => {
    const ran: unknown[] = [];
    const recordedTools = {
      ...tools,
      note: tool({
        description: 'Notes something.',
        inputSchema: z.object({ text: z.string() }),
        execute: (input) => {
          ran.push(input);
          return 'noted';
        },
      }),
    };
    const { model, calls } = recordingModel([
      // Input failing the schema: repairToolCall fixes it in the model step.
      { toolCalls: [{ toolName: 'note', input: { txt: 'typo' } }] },
      { toolCalls: [{ toolName: 'note', input: { text: 'raw' } }] },
      { text: 'Done.' },
    ]);
    const agent = defineAgent({
      name: `passed-${randomUUID().slice(0, 8)}`,
      model,
      tools: recordedTools,
      toolOrder: ['search', 'note'],
      reasoning: 'low',
      allowSystemInMessages: true,
      repairToolCall: ({ toolCall }) =>
        Promise.resolve(
          toolCall.input.includes('txt') ? { ...toolCall, input: JSON.stringify({ text: 'repaired' }) } : null,
        ),
      experimental_refineToolInput: { note: ({ text }) => ({ text: `${text}!` }) },
    });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      workerOptions: { workflowBundle: bundle },
    });
    const result = await worker.runUntil(async () => {
      const handle = await startAgentRun(env.client, {
        agent: agent.name,
        // A system message in the run's messages: only allowed with allowSystemInMessages.
        messages: [
          { role: 'system', content: 'From the messages.' },
          { role: 'user', content: 'Go.' },
        ],
        taskQueue,
      });
      return handle.result();
    });
    expect(result.text).toBe('Done.');
    // The workflow ran the repaired, then the refined inputs.
    expect(ran).toEqual([{ text: 'repaired!' }, { text: 'raw!' }]);
    for (const call of calls) {
      expect((call.tools ?? []).slice(0, 2).map((t) => t.name)).toEqual(['search', 'note']);
      expect(call.reasoning).toBe('low');
      expect(systemOf(call)).toBe('From the messages.');
    }
  });

  it('prepareStep switches the model and the instructions per step, and sees the run’s steps so far', async () => {
    const first = recordingModel([{ toolCalls: [{ toolName: 'note', input: { text: 'x' } }] }], 'first');
    const second = recordingModel([{ text: 'unused' }, { text: 'Second model answered.' }], 'second');
    const seen: Array<{ stepNumber: number; steps: string[][]; results: unknown[] }> = [];
    const agent = defineAgent({
      name: `prepare-${randomUUID().slice(0, 8)}`,
      model: first.model,
      instructions: 'You are the agent.',
      tools,
      prepareStep: ({ stepNumber, steps }) => {
        seen.push({
          stepNumber,
          steps: steps.map((s) => s.toolCalls.map((c) => c.toolName)),
          results: steps.flatMap((s) => s.toolResults.map((r) => r.output)),
        });
        return stepNumber === 0
          ? { instructions: 'Step one: take a note.', activeTools: ['note'] }
          : { model: second.model, instructions: 'Step two: answer.', toolChoice: 'none', temperature: 0 };
      },
    });
    const result = await run(agent);
    expect(result.text).toBe('Second model answered.');
    expect(first.calls).toHaveLength(1);
    expect(second.calls).toHaveLength(1);
    expect(systemOf(first.calls[0]!)).toBe('Step one: take a note.');
    expect(toolNamesOf(first.calls[0]!)).toEqual(['note']);
    expect(systemOf(second.calls[0]!)).toBe('Step two: answer.');
    expect(second.calls[0]).toMatchObject({ toolChoice: { type: 'none' }, temperature: 0 });
    // Each step's prepareStep saw the run's step number and the steps before it, with their tool results.
    expect(seen).toEqual([
      { stepNumber: 0, steps: [], results: [] },
      { stepNumber: 1, steps: [['note']], results: ['noted x'] },
    ]);
  });

  it('a tool prepareStep leaves out of a step’s activeTools is not run when the model calls it anyway', async () => {
    let searches = 0;
    const counted = { ...tools, search: tool({ ...tools.search, execute: () => `result ${++searches}` }) };
    const { model, calls } = recordingModel([
      { toolCalls: [{ toolName: 'search', input: { q: 'not offered' }, toolCallId: 'sneaky' }] },
      { text: 'Answered without searching.' },
    ]);
    const agent = defineAgent({
      name: `inactive-${randomUUID().slice(0, 8)}`,
      model,
      tools: counted,
      prepareStep: ({ stepNumber }) => (stepNumber === 0 ? { activeTools: ['note'] } : {}),
    });
    const result = await run(agent);
    expect(toolNamesOf(calls[0]!)).toEqual(['note']);
    expect(searches).toBe(0);
    expect(result.steps[0]?.toolCalls).toEqual([]);
    // The model's next step is told the call was invalid (the SDK's tool error), not given a result.
    const answer = calls[1]?.prompt.find((m) => m.role === 'tool');
    expect(JSON.stringify(answer)).toContain('sneaky');
    expect(JSON.stringify(answer)).toMatch(/error/i);
    expect(result.text).toBe('Answered without searching.');
  });

  it('stopWhen hasToolCall ends the run after that step’s tools ran, without another model call', async () => {
    const { model, calls } = recordingModel([
      { toolCalls: [{ toolName: 'note', input: { text: 'a' } }] },
      { text: 'Finishing.', toolCalls: [{ toolName: 'finish', input: {} }] },
      { text: 'never asked' },
    ]);
    const agent = defineAgent({
      name: `stop-${randomUUID().slice(0, 8)}`,
      model,
      tools,
      stopWhen: hasToolCall('finish'),
    });
    expect(agent.maxSteps).toBe(Infinity);
    const result = await run(agent);
    expect(calls).toHaveLength(2);
    expect(result.steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual([['note'], ['finish']]);
    // The text is the last step's, as the AI SDK's result has it; the finish tool ran (its result is pending).
    expect(result.text).toBe('Finishing.');
    expect(JSON.stringify(result.conversation?.pending)).toContain('finished');
  });

  it('a stop condition of your own sees the last step’s tool results; isStepCount stops at its count', async () => {
    const script: ScriptEntry[] = [0, 1, 2, 3].map((i) => ({
      toolCalls: [{ toolName: 'note', input: { text: `n${i}` } }],
    }));
    const byResult = recordingModel(script);
    const sawResult = ({ steps }: { steps: Array<StepResult<ToolSet>> }) =>
      steps.at(-1)?.toolResults.some((r) => r.output === 'noted n1') ?? false;
    const resultRun = await run(
      defineAgent({ name: `own-${randomUUID().slice(0, 8)}`, model: byResult.model, tools, stopWhen: sawResult }),
    );
    expect(resultRun.steps).toHaveLength(2);
    expect(byResult.calls).toHaveLength(2);

    const counted = recordingModel(script);
    const countRun = await run(
      defineAgent({
        name: `count-${randomUUID().slice(0, 8)}`,
        model: counted.model,
        tools,
        stopWhen: [isStepCount(3)],
      }),
    );
    expect(countRun.steps).toHaveLength(3);
    expect(counted.calls).toHaveLength(3);
  });

  it('output: the final step’s parsed object is the run’s output, and every call asks for JSON', async () => {
    const { model, calls } = recordingModel([
      { toolCalls: [{ toolName: 'search', input: { q: 'answer' } }] },
      { text: JSON.stringify({ answer: '42', sure: true }) },
    ]);
    const agent = defineAgent({
      name: `output-${randomUUID().slice(0, 8)}`,
      model,
      tools,
      output: Output.object({ schema: z.object({ answer: z.string(), sure: z.boolean() }) }),
    });
    const result = await run(agent);
    expect(result.output).toEqual({ answer: '42', sure: true });
    expect(calls.map((c) => c.responseFormat?.type)).toEqual(['json', 'json']);
  });

  it('output: an answer that fails the schema fails the model step, whose retry asks the model again (generate and stream)', async () => {
    for (const streamed of [false, true]) {
      // The first answer has a number where the schema wants a string; the retried step's has a string.
      const { model, calls } = recordingModel([
        ({ attempt }) => ({ text: JSON.stringify({ answer: attempt === 1 ? 42 : '42' }) }),
      ]);
      const agent = defineAgent({
        name: `badout-${randomUUID().slice(0, 8)}`,
        model,
        output: Output.object({ schema: z.object({ answer: z.string() }) }),
      });
      const taskQueue = `q-${randomUUID()}`;
      const worker = await createAgentWorker({
        connection: env.nativeConnection,
        taskQueue,
        agents: [agent],
        store: new MemoryEffectStore(),
        ...(streamed ? { stream: new MemoryRunStreamStore() } : {}),
        workerOptions: { workflowBundle: bundle },
      });
      const result = await worker.runUntil(async () => {
        const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Go.', taskQueue });
        return handle.result();
      });
      expect({ streamed, output: result.output, calls: calls.length }).toEqual({
        streamed,
        output: { answer: '42' },
        calls: 2,
      });
    }
  });

  it('a ToolLoopAgent passed in runs as it runs itself: same steps, text, output and model settings', async () => {
    const script: ScriptEntry[] = [
      { toolCalls: [{ toolName: 'note', input: { text: 'a' } }] },
      { toolCalls: [{ toolName: 'search', input: { q: 'b' } }] },
      { text: JSON.stringify({ answer: 'done', sure: false }) },
    ];
    const settingsWith = (model: LanguageModelV4) => ({
      id: `tla-${randomUUID().slice(0, 8)}`,
      model,
      instructions: 'Be brief.',
      tools,
      temperature: 0.5,
      stopWhen: isStepCount(5),
      prepareStep: ({ stepNumber }: { stepNumber: number }) =>
        stepNumber === 1 ? { activeTools: ['search' as const] } : undefined,
      output: Output.object({ schema: z.object({ answer: z.string(), sure: z.boolean() }) }),
    });
    const local = recordingModel(script);
    const itself = await new ToolLoopAgent(settingsWith(local.model)).generate({ prompt: 'Go.' });

    const durable = recordingModel(script);
    const agent = defineAgent({ agent: new ToolLoopAgent(settingsWith(durable.model)) });
    const result = await run(agent);

    expect(result.steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual(
      itself.steps.map((s) => s.toolCalls.map((c) => c.toolName)),
    );
    expect(result.text).toBe(itself.text);
    expect(result.output).toEqual(itself.output);
    expect(durable.calls.map((c) => [c.temperature, toolNamesOf(c), systemOf(c), c.responseFormat?.type])).toEqual(
      local.calls.map((c) => [c.temperature, toolNamesOf(c), systemOf(c), c.responseFormat?.type]),
    );
  });

  it('a ToolLoopAgent’s effect tools keep their brand: a call runs the effect protocol, once per key', async () => {
    const posted: string[] = [];
    const post = defineEffectTool({
      description: 'Posts a comment.',
      inputSchema: z.object({ body: z.string() }),
      effectKey: ({ body }) => `post:${body}`,
      execute: ({ body }) => {
        posted.push(body);
        return Promise.resolve({ posted: body });
      },
    });
    // The model posts, then posts the same comment again: the second call finds the first's record.
    const { model } = recordingModel([
      { toolCalls: [{ toolName: 'post', input: { body: 'hi' } }] },
      { toolCalls: [{ toolName: 'post', input: { body: 'hi' } }] },
      { text: 'Posted.' },
    ]);
    // Typed as ToolLoopAgentSettings (an untyped tool set): the SDK's own type would require a
    // toolsContext for the effect tool, which reads the run's ToolContext (docs, Agent settings).
    const settings: ToolLoopAgentSettings = {
      id: `tlaeff-${randomUUID().slice(0, 8)}`,
      model,
      tools: { post, ...tools },
    };
    const agent = defineAgent({ agent: new ToolLoopAgent(settings) });
    const result = await run(agent);
    expect(posted).toEqual(['hi']);
    expect(result.effects.map((e) => [e.toolName, e.key, e.outcome])).toEqual([
      ['post', 'post:hi', 'executed'],
      ['post', 'post:hi', 'recorded'],
    ]);
  });

  it('a ToolLoopAgent’s experimental_telemetry reaches every model call (functionId, integrations)', async () => {
    const seen: Array<string | undefined> = [];
    const integration: Telemetry = {
      onLanguageModelCallStart: (event) => {
        seen.push(event.functionId);
      },
    };
    const { model } = recordingModel([{ toolCalls: [{ toolName: 'note', input: { text: 't' } }] }, { text: 'Seen.' }]);
    const agent = defineAgent({
      name: `telemetry-${randomUUID().slice(0, 8)}`,
      agent: new ToolLoopAgent({
        model,
        tools,
        experimental_telemetry: { functionId: 'triage', integrations: [integration] },
      }),
    });
    expect((await run(agent)).text).toBe('Seen.');
    expect(seen).toEqual(['triage', 'triage']);
  });

  it('toolApproval: a denied rule refuses the call without running it; a function sees the runtime context', async () => {
    let ran = 0;
    const counted = {
      ...tools,
      search: tool({
        description: 'Searches.',
        inputSchema: z.object({ q: z.string() }),
        execute: () => {
          ran++;
          return 'found';
        },
      }),
    };
    const seenContext: unknown[] = [];
    const { model } = recordingModel([
      { toolCalls: [{ toolName: 'search', input: { q: 'secret' } }] },
      { toolCalls: [{ toolName: 'note', input: { text: 'n' } }] },
      { text: 'Gave up.' },
    ]);
    const agent = defineAgent({
      name: `approval-${randomUUID().slice(0, 8)}`,
      model,
      tools: counted,
      runtimeContext: { strict: true },
      toolApproval: ({ toolCall, runtimeContext }) => {
        seenContext.push(runtimeContext);
        return toolCall.toolName === 'search' && (runtimeContext as { strict?: boolean }).strict === true
          ? { type: 'denied', reason: 'no searching in strict mode' }
          : 'not-applicable';
      },
    });
    const result = await run(agent);
    expect(ran).toBe(0);
    expect(result.text).toBe('Gave up.');
    expect(result.approvals).toEqual([
      expect.objectContaining({
        toolName: 'search',
        approved: false,
        decidedBy: 'policy',
        reason: 'no searching in strict mode',
      }),
    ]);
    expect(seenContext[0]).toEqual({ strict: true });

    // The per-tool form, and the worker's registration winning over the agent's setting.
    const ruled = defineAgent({
      name: `ruled-${randomUUID().slice(0, 8)}`,
      model: recordingModel([{ toolCalls: [{ toolName: 'search', input: { q: 'x' } }] }, { text: 'No.' }]).model,
      tools: counted,
      toolApproval: { search: 'denied' },
    });
    expect((await run(ruled)).approvals).toEqual([expect.objectContaining({ toolName: 'search', approved: false })]);
    expect(ran).toBe(0);
    const overridden = await run(ruled, 'Go.', { toolApproval: { search: 'not-applicable' } });
    expect(overridden.approvals).toEqual([]);
    expect(ran).toBe(1);
  });

  it('a streaming model step (streamText) applies the same settings: call settings, prepareStep, stopWhen, output', async () => {
    const { model, calls } = recordingModel([
      { toolCalls: [{ toolName: 'note', input: { text: 's' } }] },
      { text: JSON.stringify({ answer: 'streamed', sure: true }) },
    ]);
    const agent = defineAgent({
      name: `streamed-${randomUUID().slice(0, 8)}`,
      model,
      tools,
      temperature: 0.4,
      prepareStep: ({ stepNumber }) => ({ instructions: `Streamed step ${stepNumber}.` }),
      stopWhen: hasToolCall('finish'),
      output: Output.object({ schema: z.object({ answer: z.string(), sure: z.boolean() }) }),
    });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      stream: new MemoryRunStreamStore(),
      workerOptions: { workflowBundle: bundle },
    });
    const result = await worker.runUntil(async () => {
      const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Go.', taskQueue });
      return handle.result();
    });
    expect(result.output).toEqual({ answer: 'streamed', sure: true });
    expect(calls.map((c) => [c.temperature, systemOf(c), c.responseFormat?.type])).toEqual([
      [0.4, 'Streamed step 0.', 'json'],
      [0.4, 'Streamed step 1.', 'json'],
    ]);
  });

  it('settings add no bytes to the history per step: the same run with and without them is the same size', async () => {
    const script: ScriptEntry[] = [
      ...[0, 1, 2, 3, 4].map((i) => ({ toolCalls: [{ toolName: 'note', input: { text: `n${i}` } }] })),
      { text: 'Done.' },
    ];
    const id = randomUUID().slice(0, 8);
    const plain = await runMeasured(defineAgent({ name: `plain-${id}`, model: recordingModel(script).model, tools }));
    const settledAgent = defineAgent({
      name: `setts-${id}`,
      model: recordingModel(script).model,
      tools,
      temperature: 0.2,
      seed: 1,
      providerOptions: { scripted: { a: 'b' } },
      activeTools: ['note', 'finish'],
      stopWhen: [hasToolCall('finish'), ({ steps }) => steps.length > 10],
      prepareStep: ({ stepNumber }) => ({ instructions: `Step ${stepNumber}.` }),
    });
    // No maxSteps: stopWhen leaves the agent without a bound, which must cost no bytes either.
    expect(settledAgent.maxSteps).toBe(Infinity);
    const settled = await runMeasured(settledAgent);
    expect(settled.output.steps).toHaveLength(6);
    expect(plain.output.steps).toHaveLength(6);
    // Payload for payload the same as a plain agent without a bound; the whole history within the
    // few bytes its varints vary by. Against the default bound (20, sent with every step), fewer.
    const unbounded = await runMeasured(
      defineAgent({ name: `unbnd-${id}`, model: recordingModel(script).model, tools, maxSteps: Infinity }),
    );
    expect(settled.payloadBytes).toBe(unbounded.payloadBytes);
    expect(Math.abs(settled.bytes - unbounded.bytes)).toBeLessThan(unbounded.bytes * 0.01);
    expect(settled.payloadBytes).toBeLessThanOrEqual(plain.payloadBytes);
  });

  it('a prepareStep that returns toolsContext fails the run with UnsupportedAgentSettingError, not retried', async () => {
    const { model, calls } = recordingModel([{ text: 'never' }]);
    const agent = defineAgent({
      name: `refused-${randomUUID().slice(0, 8)}`,
      model,
      tools,
      prepareStep: () => ({ toolsContext: { note: {} } }),
    });
    const failure = await run(agent).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause?.cause as { type?: string; message: string } | undefined;
    expect(cause?.type).toBe('UnsupportedAgentSettingError');
    expect(cause?.message).toContain('prepareStep returned toolsContext');
    expect(calls).toHaveLength(0);
  });
  it('a prepareStep or stopWhen that throws fails its model step with a message naming it, the agent and the step; retried', async () => {
    /** Runs `agent` with two model-step attempts; the failure's cause and how many attempts ran. */
    const failing = async (agent: Agent) => {
      const taskQueue = `q-${randomUUID()}`;
      const worker = await createAgentWorker({
        connection: env.nativeConnection,
        taskQueue,
        agents: [agent],
        store: new MemoryEffectStore(),
        workerOptions: { workflowBundle: bundle },
      });
      return worker.runUntil(async () => {
        const handle = await startAgentRun(env.client, {
          agent: agent.name,
          prompt: 'Go.',
          taskQueue,
          activityOptions: { modelStep: { retry: { maximumAttempts: 2, initialInterval: '1 second' } } },
        });
        const failure = await handle.result().catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(WorkflowFailedError);
        const cause = (failure as WorkflowFailedError).cause?.cause as
          { type?: string; nonRetryable?: boolean; message: string; cause?: { message: string } } | undefined;
        const { events } = await handle.fetchHistory();
        // The history records the started event of an activity's last attempt, with its number.
        const attempts = (events ?? []).flatMap((e) =>
          e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : [],
        );
        return { cause, attempts };
      });
    };
    const prepared = recordingModel([{ text: 'never' }]);
    const preparing = await failing(
      defineAgent({
        name: `throws-${randomUUID().slice(0, 8)}`,
        model: prepared.model,
        tools,
        // Thrown at once, not rejected: the model step must say where it came from either way.
        prepareStep: () => {
          throw new RangeError('no context for this step');
        },
      }),
    );
    expect(preparing.cause).toMatchObject({ type: 'RangeError', nonRetryable: false });
    expect(preparing.cause?.message).toMatch(
      /^Agent "throws-\w+": its prepareStep threw before the model call of step 1: no context for this step/,
    );
    expect(preparing.cause?.cause?.message).toBe('no context for this step');
    expect(preparing.attempts).toEqual([2]);
    expect(prepared.calls).toHaveLength(0);

    const stopping = await failing(
      defineAgent({
        name: `stopthrows-${randomUUID().slice(0, 8)}`,
        model: recordingModel([{ toolCalls: [{ toolName: 'note', input: { text: 'a' } }] }]).model,
        tools,
        stopWhen: () => Promise.reject(new Error('budget service down')),
      }),
    );
    expect(stopping.cause).toMatchObject({ type: 'Error', nonRetryable: false });
    expect(stopping.cause?.message).toMatch(
      /^Agent "stopthrows-\w+": its stopWhen threw before the model call of step 2: budget service down/,
    );
    // The first model step and the note tool once each, then the second model step twice.
    expect(stopping.attempts).toEqual([1, 1, 2]);
  });
});
