// A run streamed to the screen, on Temporal's time-skipping server with real PostgreSQL and
// SQLite stream stores: the model step streams (a scripted model that streams slowly), the worker
// writes the deltas to the store, runUIMessageStream follows the run. Text arrives before the run
// ends; a reader that reconnects from its cursor sees every delta once; a step whose first
// attempt broke off mid-stream ends up showing only the second attempt's text; effect outcomes
// arrive as data parts; without a stream the worker runs as before (generateText).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { UIMessage, UIMessageChunk } from 'ai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineAgent, defineEffectTool } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { PostgresRunStreamStore } from '../../src/stream/postgres-run-stream.js';
import type { RunStreamStore } from '../../src/stream/run-stream-store.js';
import { SqliteRunStreamStore } from '../../src/stream/sqlite-run-stream.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker, type AgentEntry } from '../../worker/index.js';
import { decideApproval } from '../../client/approvals-client.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { runUIMessageStream } from '../../worker/stream/run-ui-message-stream.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import { dropTables } from './fixtures/drop-tables.js';
import { streamingModel, tokens } from './fixtures/streaming-model.js';
import { finalMessage } from './fixtures/final-message.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
let dir: string;
const opened: RunStreamStore[] = [];

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-ui-stream-'));
}, 120_000);

afterAll(async () => {
  for (const store of opened) await store.close();
  await dropTables(tables);
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const tables: string[] = [];
const postgres = (): RunStreamStore => {
  const table = `stream_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  tables.push(table);
  const store = new PostgresRunStreamStore(PG_URL, { table });
  opened.push(store);
  return store;
};
const sqlite = (): RunStreamStore => {
  const store = new SqliteRunStreamStore(join(dir, `${randomUUID()}.db`), { pollMs: 20 });
  opened.push(store);
  return store;
};

const TEXT = 'The durable stream shows every token of this answer once and in order, even across reconnects.';

async function withWorker<T>(
  agents: AgentEntry[],
  stream: RunStreamStore | undefined,
  run: (taskQueue: string) => Promise<T>,
  approvalSecret?: string,
): Promise<T> {
  const taskQueue = `q-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents,
    store: new MemoryEffectStore(),
    ...(approvalSecret !== undefined ? { approvalSecret } : {}),
    ...(stream !== undefined ? { stream } : {}),
    workerOptions: { workflowBundle: bundle },
  });
  return worker.runUntil(run(taskQueue));
}

/** Reads a UI stream to its end (or until `stopWhen`), stamping each chunk with its arrival time. */
async function collect(
  stream: ReadableStream<UIMessageChunk>,
  stopWhen?: (chunks: UIMessageChunk[]) => boolean,
): Promise<Array<{ chunk: UIMessageChunk; at: number }>> {
  const out: Array<{ chunk: UIMessageChunk; at: number }> = [];
  const reader = stream.getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    out.push({ chunk: next.value, at: Date.now() });
    if (stopWhen?.(out.map((o) => o.chunk))) {
      await reader.cancel();
      break;
    }
  }
  return out;
}

const deltas = (chunks: UIMessageChunk[]): string[] =>
  chunks.flatMap((c) => (c.type === 'text-delta' ? [c.delta] : []));
const texts = (m: UIMessage | undefined): string[] =>
  m?.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])) ?? [];

describe.each([
  ['PostgreSQL (LISTEN/NOTIFY)', postgres],
  ['SQLite (polling)', sqlite],
])('a run streamed through %s', (_name, makeStore) => {
  it('delivers text deltas while the model still streams, long before the run ends', async () => {
    const stream = makeStore();
    const sentAt: number[] = [];
    const model = streamingModel([{ text: TEXT }], { delayMs: 60, onToken: () => sentAt.push(Date.now()) });
    const agent = defineAgent({ name: `slow-${randomUUID()}`, model });
    const { chunks, endedAt } = await withWorker([agent], stream, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Talk.', taskQueue });
      const reading = collect(runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream }));
      await handle.result();
      const endedAt = Date.now();
      return { chunks: await reading, endedAt };
    });
    const textChunks = chunks.filter((c) => c.chunk.type === 'text-delta');
    expect(deltas(chunks.map((c) => c.chunk)).join('')).toBe(TEXT);
    // The first delta reached the reader before the model sent its last token, and well before the run ended.
    const firstAt = textChunks[0]?.at ?? Infinity;
    expect(firstAt).toBeLessThan(sentAt[sentAt.length - 1] ?? 0);
    expect(endedAt - firstAt).toBeGreaterThan(500);
    expect(textChunks.length).toBeGreaterThan(5);
    expect(chunks.map((c) => c.chunk.type).slice(0, 3)).toEqual(['start', 'start-step', 'text-start']);
    expect(chunks.at(-1)?.chunk).toEqual({ type: 'finish', finishReason: 'stop' });
  }, 60_000);
});

describe('a run stream reader', () => {
  it('that reconnects mid-run from its cursor gets every delta once: no duplicate, no gap', async () => {
    const stream = postgres();
    const model = streamingModel([{ text: TEXT }], { delayMs: 40 });
    const agent = defineAgent({ name: `reconnect-${randomUUID()}`, model });
    await withWorker([agent], stream, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Talk.', taskQueue });
      const first = (
        await collect(
          runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream }),
          (chunks) => deltas(chunks).length >= 4,
        )
      ).map((c) => c.chunk);
      const cursor = first.flatMap((c) =>
        c.type === 'data-chamvi-cursor' ? [(c.data as { cursor: number }).cursor] : [],
      );
      const last = cursor.at(-1) ?? 0;
      // What the page applied: everything up to the last cursor part it saw.
      const applied = first.slice(0, first.findLastIndex((c) => c.type === 'data-chamvi-cursor') + 1);
      const rest = (
        await collect(runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream, from: last }))
      ).map((c) => c.chunk);
      expect(rest.some((c) => c.type === 'start')).toBe(false);
      expect([...deltas(applied), ...deltas(rest)].join('')).toBe(TEXT);
      expect(texts(await finalMessage([...applied, ...rest]))).toEqual([TEXT]);
      // And a reader that comes after the run ended replays it whole.
      const replay = (
        await collect(runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream }))
      ).map((c) => c.chunk);
      expect(texts(await finalMessage(replay))).toEqual([TEXT]);
    });
  }, 60_000);

  it("shows only the second attempt's text of a step whose first attempt broke off mid-stream", async () => {
    const stream = postgres();
    const broken = 'This first attempt breaks off after a few words and must vanish';
    const model = streamingModel([{ text: TEXT }], {
      delayMs: 20,
      textFor: (_step, attempt) => (attempt === 1 ? broken : undefined),
      failAfter: (step, attempt) => (step === 0 && attempt === 1 ? 5 : undefined),
    });
    const agent = defineAgent({ name: `retry-${randomUUID()}`, model });
    const chunks = await withWorker([agent], stream, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Talk.', taskQueue });
      return (await collect(runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream }))).map(
        (c) => c.chunk,
      );
    });
    expect(model.asked.get(0)).toBe(2);
    // The reader did show the broken attempt's words, then the reset, then the second attempt.
    expect(deltas(chunks).join('')).toBe(tokens(broken).slice(0, 5).join('') + TEXT);
    expect(chunks.filter((c) => c.type === 'reset-step')).toHaveLength(1);
    expect(texts(await finalMessage(chunks))).toEqual([TEXT]);
  }, 60_000);

  it('shows tool calls as they are typed and each effect outcome as a data-chamvi-effect part', async () => {
    const stream = postgres();
    const applied: string[] = [];
    const comment = defineEffectTool({
      description: 'Posts a comment.',
      inputSchema: z.object({ body: z.string() }),
      execute: ({ body }) => {
        applied.push(body);
        return Promise.resolve({ id: 1 });
      },
    });
    const model = streamingModel(
      [{ text: 'Posting.', toolCalls: [{ toolName: 'comment', input: { body: 'hi' } }] }, { text: 'Done.' }],
      { delayMs: 5 },
    );
    const agent = defineAgent({ name: `effects-${randomUUID()}`, model, tools: { comment } });
    const chunks = await withWorker([agent], stream, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Comment.', taskQueue });
      return (await collect(runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream }))).map(
        (c) => c.chunk,
      );
    });
    expect(applied).toEqual(['hi']);
    const types = chunks.map((c) => c.type).filter((t) => t !== 'data-chamvi-cursor');
    expect(types).toContain('tool-input-start');
    expect(types).toContain('tool-input-available');
    const effect = chunks.filter((c) => c.type === 'data-chamvi-effect');
    expect(effect.at(-1)).toMatchObject({
      id: 'call-0-0',
      data: { toolName: 'comment', outcome: 'executed', toolCallId: 'call-0-0' },
    });
    expect(types.indexOf('data-chamvi-effect')).toBeGreaterThan(types.indexOf('tool-input-available'));
    const message = await finalMessage(chunks);
    expect(texts(message)).toEqual(['Posting.', 'Done.']);
    expect(message?.parts.filter((p) => p.type === 'data-chamvi-effect')).toHaveLength(1);
    expect(message?.parts.some((p) => p.type === 'tool-comment')).toBe(true);
  }, 60_000);
});

describe('effect parts and a retried step', () => {
  it('keeps an effect part that arrived during a step whose attempt is then replaced (sent again after reset-step)', async () => {
    const stream = postgres();
    const comment = defineEffectTool({
      description: 'Posts a comment.',
      inputSchema: z.object({ body: z.string() }),
      // Slow enough that the poll right after step 0's stream ended does not see it yet.
      execute: () => new Promise((resolve) => setTimeout(() => resolve({ id: 1 }), 400)),
    });
    // Step 1's first attempt shows a word, stalls 2.5 s before its second (the effect part of step 0 arrives meanwhile, with the
    // 1.5 s poll), then breaks off; the second attempt answers.
    const model = streamingModel(
      [
        { text: 'Posting.', toolCalls: [{ toolName: 'comment', input: { body: 'hi' } }] },
        { text: 'Done now, all good.' },
      ],
      {
        pauseBefore: (step, attempt, index) => (step === 1 && attempt === 1 && index === 1 ? 2500 : 0),
        failAfter: (step, attempt) => (step === 1 && attempt === 1 ? 2 : undefined),
      },
    );
    const agent = defineAgent({ name: `reset-effects-${randomUUID()}`, model, tools: { comment } });
    const chunks = await withWorker([agent], stream, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Comment.', taskQueue });
      const ui = runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream, pollMs: 1500 });
      return (await collect(ui)).map((c) => c.chunk);
    });
    const types = chunks.map((c) => c.type);
    // The effect part first came inside step 1 (after its start-step), before the reset removed that step's parts.
    const firstEffect = types.indexOf('data-chamvi-effect');
    expect(firstEffect).toBeGreaterThan(types.lastIndexOf('start-step'));
    expect(firstEffect).toBeLessThan(types.indexOf('reset-step'));
    const message = await finalMessage(chunks);
    expect(texts(message)).toEqual(['Posting.', 'Done now, all good.']);
    expect(message?.parts.filter((p) => p.type === 'data-chamvi-effect')).toHaveLength(1);
  }, 60_000);
});

describe('approvals in the UI stream', () => {
  it('shows a pending approval as a data-chamvi-approval part, then the same part decided, then the outcome', async () => {
    const stream = postgres();
    const secret = 'stream-test-approval-secret-0123456789';
    const applied: string[] = [];
    const comment = defineEffectTool({
      description: 'Posts a comment.',
      inputSchema: z.object({ body: z.string() }),
      execute: ({ body }) => {
        applied.push(body);
        return Promise.resolve({ id: 1 });
      },
    });
    const model = streamingModel(
      [{ text: 'Asking first.', toolCalls: [{ toolName: 'comment', input: { body: 'hi' } }] }, { text: 'Posted.' }],
      { delayMs: 5 },
    );
    const agent = defineAgent({ name: `approve-${randomUUID()}`, model, tools: { comment } });
    const registration = { agent, toolApproval: { comment: 'user-approval' as const } };
    const chunks = await withWorker(
      [registration],
      stream,
      async (taskQueue) => {
        const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Comment.', taskQueue });
        const ui = runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream, pollMs: 200 });
        const reader = ui.getReader();
        const seen: UIMessageChunk[] = [];
        for (;;) {
          const next = await reader.read();
          if (next.done) throw new Error('the stream ended before the approval was pending');
          seen.push(next.value);
          if (next.value.type === 'data-chamvi-approval') break;
        }
        expect(applied).toEqual([]);
        await decideApproval(env.client, handle.workflowId, { toolCallId: 'call-0-0', approved: true, secret });
        for (let next = await reader.read(); !next.done; next = await reader.read()) seen.push(next.value);
        return seen;
      },
      secret,
    );
    expect(applied).toEqual(['hi']);
    const approvals = chunks.filter((c) => c.type === 'data-chamvi-approval');
    expect(approvals[0]).toMatchObject({ id: 'call-0-0', data: { status: 'pending', toolName: 'comment' } });
    expect(approvals.at(-1)).toMatchObject({ id: 'call-0-0', data: { status: 'decided' } });
    const message = await finalMessage(chunks);
    const parts = message?.parts.filter((p) => p.type === 'data-chamvi-approval') ?? [];
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ data: { status: 'decided' } });
    expect(message?.parts.find((p) => p.type === 'data-chamvi-effect')).toMatchObject({
      data: { outcome: 'executed' },
    });
  }, 60_000);
});

describe('a worker without a stream', () => {
  it('calls the model without streaming, as before (a model that cannot stream still runs)', async () => {
    const model = Object.assign(scriptedModel([{ text: 'No stream.' }]), {
      doStream: () => Promise.reject(new Error('streamed without a stream')),
    });
    const agent = defineAgent({ name: `plain-${randomUUID()}`, model });
    const result = await withWorker([agent], undefined, async (taskQueue) =>
      (await startAgentRun(env.client, { agent: agent.name, prompt: 'Hi.', taskQueue })).result(),
    );
    expect(result.text).toBe('No stream.');
  }, 60_000);
});
