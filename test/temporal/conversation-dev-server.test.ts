// The conversation in the store across what only a full Temporal server does: a reset
// to the middle of a run, and a run finished by a new worker process whose caches are empty.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConversation } from '../../src/conversation/load-conversation.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import type { agentWorkflow } from '../../workflows/index.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { notingAgent } from '../fixtures/noting-agent.js';

let env: TestWorkflowEnvironment;
let dir: string;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-conversation-dev-'));
}, 120_000);

afterAll(async () => {
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts test/fixtures/conversation-worker.ts; resolves once it polls, with how it ends. */
async function startWorkerProcess(
  vars: Record<string, string>,
): Promise<{ exited: Promise<string>; stop(): Promise<void> }> {
  const script = fileURLToPath(new URL('../fixtures/conversation-worker.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...vars },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready\n')) resolve();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((how) => reject(new Error(`worker process ended (${how}) before it was ready:\n${output}`)));
  });
  return {
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

// Short heartbeats, so a dead worker's model step is retried within seconds.
const fastModelStep = { modelStep: { heartbeatTimeout: '2 seconds', retry: { initialInterval: '100 ms' } } };

describe('the conversation in the store (dev server)', () => {
  it('a worker process killed mid-run: a new process, its caches empty, reads the conversation from the shared store and finishes', async () => {
    const store = join(dir, `shared-${randomUUID()}.db`);
    const common = { TEMPORAL_ADDRESS: env.address, TASK_QUEUE: `q-${randomUUID()}`, STORE: store };
    const doomed = await startWorkerProcess({ ...common, DIE_AT_STEP: '2' });
    const handle = await startAgentRun(env.client, {
      agent: 'noter',
      prompt: 'Write three notes.',
      taskQueue: common.TASK_QUEUE,
      activityOptions: fastModelStep,
    });
    expect(await doomed.exited).toBe('SIGKILL');
    // The new process's model checks, at every step, that it was sent every earlier note.
    const survivor = await startWorkerProcess(common);
    try {
      const result = await handle.result();
      expect(result.text).toBe('Noted.');
      expect(result.effects.map((e) => e.outcome)).toEqual(['executed', 'executed', 'executed']);
      const reader = new SqliteEffectStore(store);
      const messages = await loadConversation(reader, result);
      await reader.close();
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
      expect(JSON.stringify(messages)).toContain('note 2');
    } finally {
      await survivor.stop();
    }
  }, 120_000);

  it('a reset to the middle of a run: the branch continues from the conversation as it was there, and the original one stays readable', async () => {
    const store = new SqliteEffectStore(join(dir, `reset-${randomUUID()}.db`));
    const seen = new Map<number, string[]>();
    const taskQueue = `q-${randomUUID()}`;
    const workflowId = `reset-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [notingAgent({ seen })],
      store,
      health: false,
    });
    await worker.runUntil(async () => {
      const first = await startAgentRun(env.client, {
        agent: 'noter',
        prompt: 'Write three notes.',
        taskQueue,
        workflowId,
      });
      const original = await first.result();
      // Back to right after step 1's model answer, before its note was written.
      const events = (await first.fetchHistory()).events ?? [];
      const secondNote = events.filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'chamvi.effectCall',
      )[1];
      const resetPoint = events
        .filter((e) => Number(e.eventId) < Number(secondNote?.eventId))
        .findLast((e) => e.workflowTaskCompletedEventAttributes != null);
      const { runId } = await env.client.workflowService.resetWorkflowExecution({
        namespace: env.namespace ?? 'default',
        workflowExecution: { workflowId, runId: first.firstExecutionRunId },
        workflowTaskFinishEventId: resetPoint?.eventId,
        requestId: randomUUID(),
        reason: 'test: reset to the middle of the run',
      });
      seen.clear();
      const branch = await env.client.workflow.getHandle<typeof agentWorkflow>(workflowId, runId ?? undefined).result();
      // The redone step 2 saw the two notes before the reset point, not the original third one.
      expect(seen.get(2)).toEqual(['note 0', 'note 1']);
      expect(branch.runId).toBe(original.runId);
      const branchText = JSON.stringify(await loadConversation(store, branch));
      expect(branchText).toContain('note 2, redone');
      expect(branchText).not.toContain('"note 2"');
      // Note 0 as replayed, note 1 found recorded (same key), the redone note 2 applied anew.
      expect(branch.effects.map((e) => e.outcome)).toEqual(['executed', 'recorded', 'executed']);
      const originalText = JSON.stringify(await loadConversation(store, original));
      expect(originalText).toContain('"note 2"');
      expect(originalText).not.toContain('redone');
    });
    await store.close();
  }, 120_000);
});
