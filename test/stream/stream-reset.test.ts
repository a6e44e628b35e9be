// A run stream across a real workflow reset, on a Temporal dev server (the time-skipping server has
// no reset), with an SQLite stream store: the run is reset while its step 0 streams, the old
// branch's attempt (its activity still running on the worker) writes its first batch after the new
// execution's, and a page, live or replaying, shows the new execution's text whole and nothing of
// the old branch's. Which execution is newer comes from Temporal (each run's start), so rows planted
// under the run's stream naming executions Temporal does not know as the chain's hide none of it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { UIMessageChunk } from 'ai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineAgent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { RunStreamBatch, RunStreamKey } from '../../src/stream/run-stream-store.js';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import { SqliteRunStreamStore } from '../../src/stream/sqlite-run-stream.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { chainResult } from '../../worker/stream/chain-result.js';
import { ExecutionStarts } from '../../worker/stream/execution-starts.js';
import { runUIMessageStream } from '../../worker/stream/run-ui-message-stream.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import { streamingModel } from './fixtures/streaming-model.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
let dir: string;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  bundle = await bundleTestWorkflows();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-stream-reset-'));
}, 120_000);

afterAll(async () => {
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

/** A promise and its resolve. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function textOf(stream: ReadableStream<UIMessageChunk>): Promise<string> {
  const deltas: string[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    if (next.value.type === 'text-delta') deltas.push(next.value.delta);
    if (next.value.type === 'error') throw new Error(next.value.errorText);
  }
  return deltas.join('');
}

/** Resets `workflowId`'s first execution to its first workflow task; the new execution's run id. */
async function resetToStart(workflowId: string, firstRun: string, reason: string): Promise<string> {
  const { events } = await env.client.workflow.getHandle(workflowId, firstRun).fetchHistory();
  const first = events?.find((e) => e.workflowTaskCompletedEventAttributes != null);
  const { runId } = await env.client.workflowService.resetWorkflowExecution({
    namespace: env.client.options.namespace,
    workflowExecution: { workflowId, runId: firstRun },
    workflowTaskFinishEventId: first?.eventId,
    requestId: randomUUID(),
    reason,
  });
  if (typeof runId !== 'string') throw new Error('the reset named no new run');
  return runId;
}

const NEW = 'The new branch answers this, in full and in order.';
const OLD = 'Text of the old branch that the page must not show.';
// The heartbeat that would tell the old branch's attempt it was cancelled comes minutes later:
// the attempt writes on, as one whose worker has not heard of the reset yet.
const quietStep = { modelStep: { heartbeatTimeout: '10 minutes', retry: { initialInterval: '100 ms' } } };

describe('a run stream across a workflow reset', () => {
  it("shows the new execution's text whole, live and on a replay, when the old branch's first batch lands after the new one's", async () => {
    const stream = new SqliteRunStreamStore(join(dir, `reset-${randomUUID()}.db`));
    const oldCalled = latch();
    const oldMayWrite = latch();
    const model = streamingModel([{ text: NEW }], {
      delayMs: 40,
      // The model's first call is the old branch's (E1) attempt; the second, the reset's (E2).
      textFor: (_step, call) => (call === 1 ? OLD : NEW),
      holdBefore: (_step, call, index) => {
        if (call !== 1 || index !== 0) return undefined;
        oldCalled.open();
        return oldMayWrite.promise;
      },
    });
    const agent = defineAgent({ name: `reset-${randomUUID()}`, model });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      stream,
      workerOptions: { workflowBundle: bundle },
    });
    const workflowId = `reset-${randomUUID()}`;
    try {
      const { live, replay, batches, oldRun, newRun } = await worker.runUntil(async () => {
        const handle = await startAgentRun(env.client, {
          agent: agent.name,
          prompt: 'Answer.',
          taskQueue,
          workflowId,
          activityOptions: quietStep,
        });
        await oldCalled.promise;
        // To the first workflow task: the new execution schedules step 0 again.
        const newRun = await resetToStart(workflowId, handle.firstExecutionRunId, 'test: reset while step 0 streams');
        const key: RunStreamKey = {
          runId: handle.firstExecutionRunId,
          workflowId,
          firstExecutionRunId: handle.firstExecutionRunId,
        };
        const live = textOf(
          runUIMessageStream({ client: env.client, workflowId, stream, progressParts: false, pollMs: 200 }),
        );
        // The new execution writes first; then the old branch's attempt begins to write.
        await until("the new execution's first batch", async () =>
          (await stream.read(key, 0)).find((b) => b.execution === newRun),
        );
        oldMayWrite.open();
        await env.client.workflow.getHandle(workflowId).result();
        // Every batch of both branches is in before the replay.
        const batches = await until('the end of both branches', async () => {
          const all = await stream.read(key, 0);
          return all.filter((b) => b.parts.some((p) => p.type === 'step-end')).length === 2 ? all : undefined;
        });
        const replay = textOf(runUIMessageStream({ client: env.client, workflowId, stream, progressParts: false }));
        return { live: await live, replay: await replay, batches, oldRun: handle.firstExecutionRunId, newRun };
      });
      // The case itself: the new execution's batch first, one of the old branch's after it, more of the new after that.
      const firstNew = batches.findIndex((b: RunStreamBatch) => b.execution === newRun);
      const firstOld = batches.findIndex((b: RunStreamBatch) => b.execution === oldRun);
      expect(firstNew).toBe(0);
      expect(firstOld).toBeGreaterThan(firstNew);
      expect(batches.slice(firstOld).some((b) => b.execution === newRun)).toBe(true);
      expect(replay).toBe(NEW);
      expect(live).toBe(NEW);
    } finally {
      await stream.close();
    }
  }, 60_000);
});

describe("the result of a run's chain", () => {
  it("is read from the reset's run when a reset ended the chain's first execution", async () => {
    const called = latch();
    const release = latch();
    const model = streamingModel([{ text: NEW }], {
      holdBefore: (_step, call, index) => {
        if (call !== 1 || index !== 0) return undefined;
        called.open();
        return release.promise;
      },
    });
    const agent = defineAgent({ name: `result-${randomUUID()}`, model });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      stream: new MemoryRunStreamStore(),
      workerOptions: { workflowBundle: bundle },
    });
    const workflowId = `result-${randomUUID()}`;
    const { first, result } = await worker.runUntil(async () => {
      const handle = await startAgentRun(env.client, {
        agent: agent.name,
        prompt: 'Answer.',
        taskQueue,
        workflowId,
        activityOptions: quietStep,
      });
      await called.promise;
      await resetToStart(workflowId, handle.firstExecutionRunId, 'test: reset before the answer');
      const result = await chainResult(env.client, workflowId, handle.firstExecutionRunId, AbortSignal.timeout(20_000));
      release.open();
      return { first: handle, result };
    });
    // The first execution's own result is the reset's termination; the chain's is the answer.
    await expect(first.result()).rejects.toThrow('test: reset before the answer');
    expect(result).toMatchObject({ text: NEW });
  }, 60_000);
});

describe('the execution order of a run stream page', () => {
  it('knows only runs of the chain: a made-up, malformed or empty run id, or a run of a later start of the workflow id, is unknown', async () => {
    const agent = defineAgent({ name: `order-${randomUUID()}`, model: streamingModel([{ text: 'Done.' }]) });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      stream: new MemoryRunStreamStore(),
      workerOptions: { workflowBundle: bundle },
    });
    const workflowId = `order-${randomUUID()}`;
    const [earlier, later] = await worker.runUntil(async () => {
      const runs: string[] = [];
      for (let i = 0; i < 2; i++) {
        const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Go.', taskQueue, workflowId });
        await handle.result();
        runs.push(handle.firstExecutionRunId);
      }
      return runs as [string, string];
    });
    const starts = new ExecutionStarts(env.client, workflowId, earlier, AbortSignal.timeout(10_000));
    const batchOf = (execution: string): RunStreamBatch => ({
      runId: earlier,
      workflowId,
      firstExecutionRunId: earlier,
      step: 0,
      attempt: 1,
      execution,
      cursor: 1,
      parts: [],
    });
    const madeUp = randomUUID();
    await starts.learn([earlier, later, madeUp, 'not a run id', ''].map(batchOf));
    const started = (await env.client.workflow.getHandle(workflowId, earlier).describe()).startTime.getTime();
    expect(starts.order(earlier)).toBe(started);
    // The later start of the workflow id began after this chain: taken as the chain's, it would pass every execution.
    expect(starts.order(later)).toBeUndefined();
    expect(starts.order(madeUp)).toBeUndefined();
    expect(starts.order('not a run id')).toBeUndefined();
    expect(starts.order('')).toBeUndefined();
  }, 60_000);

  it("hides none of the run's text behind rows planted under its stream naming executions Temporal does not know", async () => {
    const stream = new SqliteRunStreamStore(join(dir, `planted-${randomUUID()}.db`));
    const planted = latch();
    const model = streamingModel([{ text: NEW }], {
      delayMs: 10,
      holdBefore: (_step, _call, index) => (index === 3 ? planted.promise : undefined),
    });
    const agent = defineAgent({ name: `planted-${randomUUID()}`, model });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      stream,
      workerOptions: { workflowBundle: bundle },
    });
    const workflowId = `planted-${randomUUID()}`;
    try {
      const replay = await worker.runUntil(async () => {
        const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Answer.', taskQueue, workflowId });
        const first = handle.firstExecutionRunId;
        const key: RunStreamKey = { runId: first, workflowId, firstExecutionRunId: first };
        await until('the first batch', async () => (await stream.read(key, 0))[0]);
        // Mid-step: rows naming executions no Temporal run of the chain has, with later steps.
        for (const [i, execution] of [randomUUID(), 'forged', ''].entries()) {
          await stream.append({ ...key, step: 5 + i, attempt: 1, execution }, [
            { type: 'text-delta', id: 't', delta: `Planted ${i}.` },
          ]);
        }
        planted.open();
        await handle.result();
        return textOf(runUIMessageStream({ client: env.client, workflowId, stream, progressParts: false }));
      });
      expect(replay).toBe(NEW);
    } finally {
      await stream.close();
    }
  }, 60_000);
});
