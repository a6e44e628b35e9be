// Offloaded payloads (External Storage on the workers' SQLite store) edited in the store between
// the write and the read, on the time-skipping server: what was stored reaches the model and the
// tools, or nothing does. The rows are rewritten with SQL, on another connection, right after the
// driver stored them (and so before anyone reads them).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { defineAgent, defineEffectTool, type Agent } from '../../src/index.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
let dir: string;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-offload-'));
}, 120_000);

afterAll(async () => {
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

/** Well over the 32 KiB from which External Storage offloads a payload. */
const BIG = 40_000;

/** The JSON a stored payload row carries (the driver's header, then the payload's data). */
function rowJson(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes);
  return buffer.subarray(4 + buffer.readUInt32BE(0)).toString();
}

/**
 * A store on a fresh SQLite file whose payload rows `forge` picks are rewritten with SQL right
 * after the driver stored them: `forge` gets a row's JSON and answers the text to put in its
 * place (the same length, so the row still decodes), or `undefined` to leave it. `forged` lists
 * the keys of the rows rewritten.
 */
function forgingStore(forge: (json: string) => string | undefined) {
  const path = join(dir, `store-${randomUUID()}.db`);
  const store = new SqliteEffectStore(path);
  const forged: string[] = [];
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'putPayload') {
        return async (key: string, data: Uint8Array) => {
          await target.putPayload(key, data);
          const json = rowJson(data);
          const replacement = forge(json);
          if (replacement === undefined || forged.includes(key)) return;
          expect(replacement).toHaveLength(json.length);
          const bytes = Buffer.from(data);
          bytes.write(replacement, bytes.length - Buffer.byteLength(json));
          const db = new DatabaseSync(path);
          db.prepare('UPDATE chamvi_effects_payloads SET data = ? WHERE key = ?').run(bytes, key);
          db.close();
          forged.push(key);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: proxy, forged, named: `SQLite file ${resolve(path)}`, close: () => store.close() };
}

async function withWorker<T>(agent: Agent, store: SqliteEffectStore, run: (taskQueue: string) => Promise<T>) {
  const taskQueue = `q-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [agent],
    store,
    workerOptions: { workflowBundle: bundle },
  });
  return worker.runUntil(run(taskQueue));
}

/** Each failure of a chain (an error and its causes): type, message, and an activity's retry state. */
function failureChain(error: unknown): Array<{ type: string; message: string; retryState?: string }> {
  const chain: Array<{ type: string; message: string; retryState?: string }> = [];
  for (let at: unknown = error; at instanceof Error && chain.length < 10; at = at.cause) {
    const { type, retryState } = at as { type?: string; retryState?: string };
    chain.push({ type: type ?? at.name, message: at.message, ...(retryState ? { retryState } : {}) });
  }
  return chain;
}

/** The attempt each activity of a run ended on, in order. */
async function attemptsOf(handle: WorkflowHandle): Promise<number[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const started = e.activityTaskStartedEventAttributes;
    return started ? [started.attempt ?? 0] : [];
  });
}

/** The activity failure of a chain, and the OffloadedPayloadCorruptError in it. */
function corruptIn(error: unknown) {
  const chain = failureChain(error);
  return {
    activity: chain.find((f) => f.type === 'ActivityFailure'),
    corrupt: chain.find((f) => f.type === 'OffloadedPayloadCorruptError'),
  };
}

type Prompt = LanguageModelV4CallOptions['prompt'];
const textOf = (prompt: Prompt): string => JSON.stringify(prompt);

describe('offloaded payloads edited in the store (time-skipping server)', () => {
  it("an effect call's offloaded input edited in the store fails the run with OffloadedPayloadCorruptError, and execute never runs", async () => {
    const { store, forged, named, close } = forgingStore((json) => {
      const call = JSON.parse(json) as { agent?: unknown; toolName?: unknown };
      // The effect call's activity input (the model step's result holds the same input, as a plan).
      return call.agent !== undefined && call.toolName === 'publish' ? json.replaceAll('draft', 'final') : undefined;
    });
    const published: string[] = [];
    const agent = defineAgent({
      name: 'publisher',
      model: scriptedModel([
        { toolCalls: [{ toolName: 'publish', input: { body: 'draft'.repeat(BIG / 5) } }] },
        { text: 'Published.' },
      ]),
      tools: {
        publish: defineEffectTool({
          description: 'Publishes a post.',
          inputSchema: z.object({ body: z.string() }),
          execute: ({ body }) => {
            published.push(body.slice(0, 10));
            return Promise.resolve({ published: true });
          },
        }),
      },
    });
    const failure = await withWorker(agent, store, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'publisher', prompt: 'Publish it.', taskQueue });
      const error = await handle.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      return { error, attempts: await attemptsOf(handle) };
    });
    expect(forged).toHaveLength(1);
    expect(published).toEqual([]);
    // Not retried: every attempt would read the same bytes.
    expect(failure.attempts).toEqual([1, 1]);
    const { corrupt } = corruptIn(failure.error);
    expect(corrupt?.message).toContain(`payload ${forged[0]} `);
    expect(corrupt?.message).toContain(named);
    await close();
  }, 120_000);

  it("a model step's offloaded input edited in the store fails the run with OffloadedPayloadCorruptError before the model is called", async () => {
    const { store, forged, named, close } = forgingStore((json) =>
      json.includes('"step":0') && json.includes('ccccc') ? json.replaceAll('ccccc', 'ddddd') : undefined,
    );
    const prompts: string[] = [];
    const agent = defineAgent({
      name: 'summariser',
      model: scriptedModel([
        ({ prompt }) => {
          prompts.push(textOf(prompt));
          return { text: 'Summarised.' };
        },
      ]),
      tools: {},
    });
    const failure = await withWorker(agent, store, async (taskQueue) => {
      const prompt = `Summarise: ${'c'.repeat(BIG)}`;
      const handle = await startAgentRun(env.client, { agent: 'summariser', prompt, taskQueue });
      return handle.result().then(
        () => undefined,
        (error: unknown) => error,
      );
    });
    expect(forged).toHaveLength(1);
    expect(prompts).toEqual([]);
    const { activity, corrupt } = corruptIn(failure);
    expect(activity?.retryState).toBe('NON_RETRYABLE_FAILURE');
    expect(corrupt?.message).toContain(`payload ${forged[0]} `);
    expect(corrupt?.message).toContain(named);
    await close();
  }, 120_000);

  it('an offloaded tool result edited in the store never reaches the model: the workflow task fails with OffloadedPayloadCorruptError and the run waits', async () => {
    const { store, forged, named, close } = forgingStore((json) =>
      json.includes('"output"') && json.includes('eeeee') ? json.replaceAll('eeeee', 'fffff') : undefined,
    );
    const prompts: string[] = [];
    const agent = defineAgent({
      name: 'fetcher',
      model: scriptedModel([
        { toolCalls: [{ toolName: 'fetchLog', input: { id: 7 } }] },
        ({ prompt }) => {
          prompts.push(textOf(prompt));
          return { text: 'Read it.' };
        },
      ]),
      tools: {
        fetchLog: defineEffectTool({
          description: 'Fetches a log.',
          inputSchema: z.object({ id: z.number() }),
          execute: ({ id }) => Promise.resolve({ id, log: 'e'.repeat(BIG) }),
        }),
      },
    });
    const seen = await withWorker(agent, store, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'fetcher', prompt: 'Read log 7.', taskQueue });
      // Until the workflow task fails or the run ends (it does without the check: the model reads the forged log).
      for (let i = 0; i < 200; i++) {
        const { events } = await handle.fetchHistory();
        const failed = events?.find((e) => e.workflowTaskFailedEventAttributes != null);
        const closed = (await handle.describe()).status.name !== 'RUNNING';
        if (failed !== undefined || closed) {
          if (!closed) await handle.terminate('test: the forged row stays');
          return { failure: failed?.workflowTaskFailedEventAttributes?.failure, closed };
        }
        await new Promise((done) => setTimeout(done, 100));
      }
      throw new Error('neither a failed workflow task nor a closed run after 20 s');
    });
    expect(forged).toHaveLength(1);
    expect(prompts).toEqual([]);
    expect(seen.closed).toBe(false);
    expect(seen.failure?.applicationFailureInfo).toMatchObject({
      type: 'OffloadedPayloadCorruptError',
      nonRetryable: true,
    });
    expect(seen.failure?.message).toContain(`payload ${forged[0]} `);
    expect(seen.failure?.message).toContain(named);
    await close();
  }, 120_000);
});
