// A run stream reader across workflow executions, on a Temporal dev server (the time-skipping
// server may skip its clock past a model step that streams in real time, and time the run out): a run that
// continues as new after every step is followed through its executions to its end (each step
// once, the final result's effects); when the workflow id is reused for a new run
// (startAgentRun with the same `workflowId` once the first closed), the reader follows the run it
// started with to that run's end, and nothing of the new run (its effect outcomes, its result,
// its wait) leaks into the first run's message; and two workflows given the same run id, streaming
// at once through their continue-as-new chains, each show only their own text.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { UIMessageChunk } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent, defineEffectTool } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { runUIMessageStream } from '../../worker/stream/run-ui-message-stream.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import { streamingModel } from './fixtures/streaming-model.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

async function readAll(stream: ReadableStream<UIMessageChunk>): Promise<{ chunks: UIMessageChunk[]; endedAt: number }> {
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) return { chunks, endedAt: Date.now() };
    chunks.push(next.value);
  }
}

describe('a run stream reader whose workflow id is reused for a new run', () => {
  it('ends with its own run and shows nothing of the new run started under the same workflow id', async () => {
    const stream = new MemoryRunStreamStore();
    const note = defineEffectTool({
      description: 'Notes something.',
      inputSchema: z.object({ text: z.string() }),
      execute: () => Promise.resolve({ ok: true }),
    });
    const first = defineAgent({
      name: `first-${randomUUID()}`,
      model: streamingModel([{ text: 'The first run answers at once.' }], { delayMs: 5 }),
    });
    // The second run takes seconds: time enough for the reader's next describe to see it running.
    const second = defineAgent({
      name: `second-${randomUUID()}`,
      model: streamingModel(
        [{ text: 'Noting.', toolCalls: [{ toolName: 'note', input: { text: 'x' } }] }, { text: 'Then a slow answer.' }],
        { delayMs: 800 },
      ),
      tools: { note },
    });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [first, second],
      store: new MemoryEffectStore(),
      stream,
      workerOptions: { workflowBundle: bundle },
    });
    const workflowId = `reused-${randomUUID()}`;
    const { read, secondEndedAt } = await worker.runUntil(async () => {
      const a = await startAgentRun(env.client, { agent: first.name, prompt: 'Talk.', taskQueue, workflowId });
      // A describe every 2 s: the first run closes and the second starts between two of them.
      const reading = readAll(runUIMessageStream({ client: env.client, workflowId, stream, pollMs: 2000 }));
      await a.result();
      const b = await startAgentRun(env.client, { agent: second.name, prompt: 'Note.', taskQueue, workflowId });
      await b.result();
      const secondEndedAt = Date.now();
      return { read: await reading, secondEndedAt };
    });
    const { chunks } = read;
    expect(chunks.filter((c) => c.type === 'data-chamvi-effect')).toEqual([]);
    expect(
      chunks
        .filter((c) => c.type === 'text-delta')
        .map((c) => (c as { delta: string }).delta)
        .join(''),
    ).toBe('The first run answers at once.');
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    // It ended with the first run, not with the second.
    expect(read.endedAt).toBeLessThan(secondEndedAt - 1000);
  }, 60_000);
});

describe('a workflow id started again for a new run under the same custom run id', () => {
  it("a reader of the new run replays the new run's text only, not the earlier run's", async () => {
    const stream = new MemoryRunStreamStore();
    const agents = ['Earlier', 'Later'].map((word) =>
      defineAgent({
        name: `${word}-${randomUUID()}`,
        model: streamingModel([{ text: `${word} run.` }], { delayMs: 5 }),
      }),
    );
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents,
      store: new MemoryEffectStore(),
      stream,
      workerOptions: { workflowBundle: bundle },
    });
    const workflowId = `again-${randomUUID()}`;
    const runId = `issue-${randomUUID()}`;
    const chunks = await worker.runUntil(async () => {
      for (const agent of agents) {
        await (
          await startAgentRun(env.client, { agent: agent.name, prompt: 'Talk.', taskQueue, workflowId, runId })
        ).result();
      }
      // The page opens after both ran: a full replay of the workflow id's current run.
      const ui = runUIMessageStream({ client: env.client, workflowId, stream, runId, progressParts: false });
      return (await readAll(ui)).chunks;
    });
    const text = chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { delta: string }).delta);
    expect(text.join('')).toBe('Later run.');
    expect(chunks.filter((c) => c.type === 'start-step')).toHaveLength(1);
  }, 60_000);
});

describe('a run stream reader of a run that continues as new', () => {
  it('follows the run through its executions: every step once, then finish with the effect outcome', async () => {
    const stream = new MemoryRunStreamStore();
    const note = defineEffectTool({
      description: 'Notes something.',
      inputSchema: z.object({ text: z.string() }),
      execute: () => Promise.resolve({ ok: true }),
    });
    const agent = defineAgent({
      name: `continuing-${randomUUID()}`,
      model: streamingModel(
        [
          { text: 'First, a note.', toolCalls: [{ toolName: 'note', input: { text: 'x' } }] },
          { text: 'Then the answer.' },
        ],
        { delayMs: 20 },
      ),
      tools: { note },
    });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      stream,
      workerOptions: { workflowBundle: bundle },
    });
    const { chunks, executions } = await worker.runUntil(async () => {
      const handle = await startAgentRun(env.client, {
        agent: agent.name,
        prompt: 'Note.',
        taskQueue,
        continueAsNewAfterSteps: 1,
      });
      const read = await readAll(runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream }));
      const { runId } = await handle.result();
      const batches = await stream.read({ runId, workflowId: handle.workflowId, firstExecutionRunId: runId }, 0);
      return { chunks: read.chunks, executions: new Set(batches.map((b) => b.execution)).size };
    });
    expect(executions).toBe(2);
    const text = chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { delta: string }).delta);
    expect(text.join('')).toBe('First, a note.Then the answer.');
    expect(chunks.filter((c) => c.type === 'start-step')).toHaveLength(2);
    expect(chunks.filter((c) => c.type === 'data-chamvi-effect').at(-1)).toMatchObject({
      data: { toolName: 'note', outcome: 'executed' },
    });
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
  }, 60_000);
});

describe('two workflows given the same run id, streaming at the same time', () => {
  it("each reader shows its own workflow's text through its continue-as-new chain, none of the other's", async () => {
    const stream = new MemoryRunStreamStore();
    const note = defineEffectTool({
      description: 'Notes something.',
      inputSchema: z.object({ text: z.string() }),
      execute: () => Promise.resolve({ ok: true }),
    });
    const speaker = (word: string) =>
      defineAgent({
        name: `${word}-${randomUUID()}`,
        model: streamingModel(
          [
            { text: `${word} notes first.`, toolCalls: [{ toolName: 'note', input: { text: word } }] },
            { text: `${word} then answers, word by word.` },
          ],
          { delayMs: 40 },
        ),
        tools: { note },
      });
    const agents = [speaker('Alpha'), speaker('Beta')];
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents,
      store: new MemoryEffectStore(),
      stream,
      workerOptions: { workflowBundle: bundle },
    });
    // A custom run id, as one per issue would be: both workflows stream under it at once.
    const runId = `issue-${randomUUID()}`;
    const texts = await worker.runUntil(async () => {
      const handles = await Promise.all(
        agents.map((agent) =>
          startAgentRun(env.client, {
            agent: agent.name,
            prompt: 'Talk.',
            taskQueue,
            runId,
            continueAsNewAfterSteps: 1,
          }),
        ),
      );
      const reads = await Promise.all(
        handles.map((h) =>
          readAll(
            runUIMessageStream({ client: env.client, workflowId: h.workflowId, stream, runId, progressParts: false }),
          ),
        ),
      );
      await Promise.all(handles.map((h) => h.result()));
      return reads.map(({ chunks }) => ({
        text: chunks
          .filter((c) => c.type === 'text-delta')
          .map((c) => (c as { delta: string }).delta)
          .join(''),
        steps: chunks.filter((c) => c.type === 'start-step').length,
        last: chunks.at(-1),
      }));
    });
    expect(texts).toEqual(
      ['Alpha', 'Beta'].map((word) => ({
        text: `${word} notes first.${word} then answers, word by word.`,
        steps: 2,
        last: { type: 'finish', finishReason: 'stop' },
      })),
    );
  }, 60_000);
});
