// The conversation out of the event history, on the time-skipping server: long runs
// with large tool results stay in one execution under Temporal's payload limit, continue-as-new
// carries a reference, and a model step retried after it wrote the conversation continues from
// the store.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { defineAgent, defineEffectTool } from '../../src/index.js';
import { loadConversation } from '../../src/conversation/load-conversation.js';
import type { ConversationEntry } from '../../src/conversation/conversation-entry.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { scriptedModel, type ScriptedStep } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker, type AgentEntry, type ChamviPluginOptions } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { externalStorageProblem, storeStorageDriver } from '../../worker/store-storage-driver.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

const { temporal } = proto;
/** Temporal's default payload limit (the server's `limit.blobSize.error`). */
const PAYLOAD_LIMIT = 2 * 1024 * 1024;

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
let dir: string;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-conversation-'));
}, 120_000);

afterAll(async () => {
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const sqlite = (): SqliteEffectStore => new SqliteEffectStore(join(dir, `store-${randomUUID()}.db`));

async function withWorker<T>(
  agents: AgentEntry[],
  store: SqliteEffectStore,
  run: (taskQueue: string) => Promise<T>,
  extra: Pick<ChamviPluginOptions, 'externalStorage'> = {},
): Promise<T> {
  const taskQueue = `q-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents,
    store,
    ...extra,
    workerOptions: { workflowBundle: bundle },
  });
  return worker.runUntil(run(taskQueue));
}

/** Every execution of a run (its continue-as-new chain): history bytes as the server sends them, and each payload's size. */
async function executionsOf(
  handle: WorkflowHandleWithFirstExecutionRunId,
): Promise<Array<{ bytes: number; payloads: number[]; input: number }>> {
  const out: Array<{ bytes: number; payloads: number[]; input: number }> = [];
  let runId: string | undefined = handle.firstExecutionRunId;
  while (runId !== undefined) {
    const history: proto.temporal.api.history.v1.IHistory = await env.client.workflow
      .getHandle(handle.workflowId, runId)
      .fetchHistory();
    const payloads: number[] = [];
    const walk = (value: unknown): void => {
      if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
      if (Array.isArray(value)) return value.forEach(walk);
      const record = value as Record<string, unknown>;
      if (record['data'] instanceof Uint8Array && 'metadata' in record) {
        payloads.push(temporal.api.common.v1.Payload.encode(record).finish().length);
        return;
      }
      Object.values(record).forEach(walk);
    };
    walk(history.events);
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    out.push({
      bytes: temporal.api.history.v1.History.encode(history).finish().length,
      payloads,
      input:
        started === undefined || started === null ? 0 : temporal.api.common.v1.Payload.encode(started).finish().length,
    });
    const last: proto.temporal.api.history.v1.IHistoryEvent | undefined = history.events?.[history.events.length - 1];
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return out;
}

type Prompt = LanguageModelV4CallOptions['prompt'];

/** The tool results the model was sent, in order, as the text of their JSON. */
function toolResultsIn(prompt: Prompt): string[] {
  return prompt.flatMap((m) =>
    m.role === 'tool' ? m.content.map((part) => ('output' in part ? JSON.stringify(part.output) : '')) : [],
  );
}

/** An effect tool that attaches a log of `bytes` bytes (and records it as its result). */
function attachTool(bytes: number) {
  return defineEffectTool({
    description: 'Attaches a log to the issue.',
    inputSchema: z.object({ part: z.number() }),
    execute: ({ part }) => Promise.resolve({ part, log: String(part % 10).repeat(bytes) }),
  });
}

/** The model: `steps` attach calls, each seeing every earlier result whole, then text. */
function attachingModel(steps: number, bytes: number) {
  return scriptedModel(
    Array.from({ length: steps + 1 }, (_, step) => ({ prompt }: { prompt: Prompt }): ScriptedStep => {
      const results = toolResultsIn(prompt);
      // The model step must have sent the whole conversation, read back from the store.
      if (results.length !== step || results.some((r, i) => !r.includes(String(i % 10).repeat(bytes)))) {
        throw new Error(
          `step ${step}: the model was sent ${results.length} tool results, not the ${step} earlier ones: ${results.map((r) => r.slice(0, 80)).join(' | ')}`,
        );
      }
      return step < steps ? { toolCalls: [{ toolName: 'attach', input: { part: step } }] } : { text: 'Attached.' };
    }),
  );
}

describe('the conversation in the store (time-skipping server)', () => {
  it('a 40-step run whose tool results are 200 KB each completes in one execution, no payload near the limit', async () => {
    const store = sqlite();
    const agent = defineAgent({
      name: 'attacher',
      model: attachingModel(40, 200_000),
      maxSteps: 41,
      tools: { attach: attachTool(200_000) },
    });
    const { result, executions } = await withWorker([agent], store, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'attacher', prompt: 'Attach the logs.', taskQueue });
      return { result: await handle.result(), executions: await executionsOf(handle) };
    });
    expect(result.text).toBe('Attached.');
    expect(result.effects).toHaveLength(40);
    expect(executions).toHaveLength(1);
    const [only] = executions;
    // 8 MB of tool results, each in the history twice (the result, the next step's input) without
    // External Storage; with it, a reference each.
    expect(Math.max(...(only?.payloads ?? []))).toBeLessThan(64 * 1024);
    expect(only?.bytes).toBeLessThan(400_000);
    const messages = await loadConversation(store, result);
    expect(messages.filter((m) => m.role === 'tool')).toHaveLength(40);
    expect(JSON.stringify(messages).length).toBeGreaterThan(40 * 200_000);
    await store.close();
  }, 300_000);

  it('a single 5 MB tool result completes instead of failing with EffectResultTooLargeError', async () => {
    const store = sqlite();
    const agent = defineAgent({
      name: 'big-attacher',
      model: attachingModel(1, 5_000_000),
      tools: { attach: attachTool(5_000_000) },
    });
    const { result, executions } = await withWorker([agent], store, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'big-attacher', prompt: 'Attach the log.', taskQueue });
      return { result: await handle.result(), executions: await executionsOf(handle) };
    });
    expect(result.text).toBe('Attached.');
    expect(result.effects).toEqual([expect.objectContaining({ toolName: 'attach', outcome: 'executed' })]);
    expect(Math.max(...executions.flatMap((e) => e.payloads))).toBeLessThan(PAYLOAD_LIMIT);
    const tool = (await loadConversation(store, result)).find((m) => m.role === 'tool');
    expect(JSON.stringify(tool).length).toBeGreaterThan(5_000_000);
    await store.close();
  }, 120_000);

  it('continue-as-new carries the reference: every execution starts small, and the conversation reads whole from the store', async () => {
    const store = sqlite();
    const agent = defineAgent({
      name: 'continuing',
      model: attachingModel(3, 10_000),
      tools: { attach: attachTool(10_000) },
    });
    const { result, executions } = await withWorker([agent], store, async (taskQueue) => {
      const handle = await startAgentRun(env.client, {
        agent: 'continuing',
        prompt: 'Attach the logs.',
        taskQueue,
        continueAsNewAfterSteps: 1,
      });
      return { result: await handle.result(), executions: await executionsOf(handle) };
    });
    expect(executions).toHaveLength(4);
    // A checkpoint holds the key of the conversation's head and the last step's tool results
    // (10 KB), never the 30 KB of every result so far.
    for (const execution of executions) expect(execution.input).toBeLessThan(14_000);
    expect(result.effects.map((e) => e.outcome)).toEqual(['executed', 'executed', 'executed']);
    const messages = await loadConversation(store, result);
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    await store.close();
  }, 120_000);

  it('a model step retried after it stored its answer continues from the store, on the answer of the retry only', async () => {
    const store = sqlite();
    let crashes = 0;
    // The first answer of step 1 is stored, then the attempt dies before Temporal hears of it.
    const crashing = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'appendConversation') {
          return async (runId: string, entries: readonly ConversationEntry[], options?: { close?: boolean }) => {
            await target.appendConversation(runId, entries, options);
            if (crashes === 0 && entries.some((e) => e.json.includes('first try'))) {
              crashes++;
              throw new Error('worker lost after storing the model step');
            }
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const body = (attempt: number) => (attempt === 1 ? 'first try' : 'second try');
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'attach', input: { part: 0 } }] },
      ({ attempt }) => ({ toolCalls: [{ toolName: 'note', input: { text: body(attempt) } }] }),
      { text: 'Done.' },
    ]);
    const notes: string[] = [];
    const agent = defineAgent({
      name: 'retried',
      model,
      tools: {
        attach: attachTool(100),
        note: defineEffectTool({
          description: 'Writes a note.',
          inputSchema: z.object({ text: z.string() }),
          execute: ({ text }) => {
            notes.push(text);
            return Promise.resolve({ noted: text });
          },
        }),
      },
    });
    const result = await withWorker([{ agent, tools: {} }], crashing, async (taskQueue) =>
      (await startAgentRun(env.client, { agent: 'retried', prompt: 'go', taskQueue })).result(),
    );
    expect(crashes).toBe(1);
    expect(notes).toEqual(['second try']);
    const messages = await loadConversation(store, result);
    const text = JSON.stringify(messages);
    expect(text).toContain('second try');
    expect(text).not.toContain('first try');
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    await store.close();
  }, 120_000);
});

describe("the store's External Storage driver", () => {
  it('gives every payload back byte for byte, and stores one payload once (content-addressed)', async () => {
    const store = new MemoryEffectStore();
    const put: string[] = [];
    const driver = storeStorageDriver({
      ...store,
      appendConversation: (...args) => store.appendConversation(...args),
      loadConversation: (head) => store.loadConversation(head),
      getPayload: (key) => store.getPayload(key),
      putPayload: (key, data) => {
        put.push(key);
        return store.putPayload(key, data);
      },
    });
    const payloads = [
      {
        metadata: { encoding: Buffer.from('json/plain') },
        data: Buffer.from(JSON.stringify({ log: 'x'.repeat(50_000) })),
      },
      { metadata: { encoding: Buffer.from('binary/null') }, data: new Uint8Array() },
    ];
    const claims = await driver.store({}, [...payloads, payloads[0]!]);
    expect(new Set(put).size).toBe(2);
    expect(claims[0]?.claimData).toEqual(claims[2]?.claimData);
    const back = await driver.retrieve({}, claims);
    expect(back.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString())).toEqual(
      [...payloads, payloads[0]!].map((p) => Buffer.from(p.data).toString()),
    );
    expect(Buffer.from(back[1]?.metadata?.['encoding'] ?? new Uint8Array()).toString()).toBe('binary/null');
  });

  it("this install can use Temporal's External Storage (one copy of protobufjs 8)", () => {
    expect(externalStorageProblem()).toBeUndefined();
  });
});
