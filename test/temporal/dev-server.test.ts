import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import type { agentWorkflow } from '../../workflows/index.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { startChildWorker } from '../fixtures/child-worker.js';
import { commentsOn, createResponder, openIssue } from '../fixtures/responder.js';

let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;
let dir: string;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  github = await new LocalGitHubServer().start();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-dev-'));
}, 120_000);

afterAll(async () => {
  await github?.stop();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

describe('agent workflow on the Temporal dev server', () => {
  it('a worker process SIGKILLed after the comment is posted leaves exactly one comment; a second process finishes the run', async () => {
    const issue = openIssue(github);
    const taskQueue = `q-${randomUUID()}`;
    const common = {
      TEMPORAL_ADDRESS: env.address,
      TASK_QUEUE: taskQueue,
      GITHUB_URL: github.url,
      ISSUE: String(issue),
    };
    const store = `sqlite:${join(dir, `effects-${randomUUID()}.db`)}`;

    const doomed = await startChildWorker({ ...common, STORE: store, CRASH: 'after-comment' });
    const handle = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer issue ${issue}`, taskQueue });
    expect(await doomed.exited).toBe('SIGKILL');
    expect(commentsOn(github, issue)).toBe(1);

    const survivor = await startChildWorker({ ...common, STORE: store });
    try {
      const result = await handle.result();
      expect(commentsOn(github, issue)).toBe(1);
      expect(result.effects).toEqual([
        expect.objectContaining({ toolName: 'comment', outcome: 'reconciled', attempts: 2 }),
      ]);
    } finally {
      await survivor.stop();
    }
  }, 90_000);

  it('a workflow reset to before the effect does not apply it again; a new start of the same workflow id applies it anew', async () => {
    const issue = openIssue(github);
    const taskQueue = `q-${randomUUID()}`;
    const workflowId = `reset-${randomUUID()}`;
    const script = [{ toolCalls: [{ toolName: 'comment', input: { issue, body: 'Thanks!' } }] }, { text: 'Done.' }];
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [createResponder({ githubUrl: github.url, model: scriptedModel([...script, ...script]) })],
      store: new MemoryEffectStore(),
    });
    await worker.runUntil(async () => {
      const first = await startAgentRun(env.client, { agent: 'responder', prompt: 'go', taskQueue, workflowId });
      const original = await first.result();
      expect(original.effects).toEqual([expect.objectContaining({ outcome: 'executed' })]);

      const history = await first.fetchHistory();
      const events = history.events ?? [];
      const effectScheduled = events.findIndex(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'chamvi.effectCall',
      );
      const resetPoint = events
        .slice(0, effectScheduled)
        .findLast((e) => e.workflowTaskCompletedEventAttributes != null);
      const { runId: resetRunId } = await env.client.workflowService.resetWorkflowExecution({
        namespace: env.namespace ?? 'default',
        workflowExecution: { workflowId, runId: first.firstExecutionRunId },
        workflowTaskFinishEventId: resetPoint?.eventId,
        requestId: randomUUID(),
        reason: 'test: reset to before the effect',
      });
      const afterReset = await env.client.workflow
        .getHandle<typeof agentWorkflow>(workflowId, resetRunId ?? undefined)
        .result();
      expect(afterReset.runId).toBe(original.runId);
      expect(afterReset.effects).toEqual([
        expect.objectContaining({ key: original.effects[0]?.key, outcome: 'recorded' }),
      ]);
      expect(commentsOn(github, issue)).toBe(1);

      const again = await startAgentRun(env.client, { agent: 'responder', prompt: 'go', taskQueue, workflowId });
      const fresh = await again.result();
      expect(fresh.runId).not.toBe(original.runId);
      expect(fresh.effects).toEqual([expect.objectContaining({ outcome: 'executed' })]);
      expect(commentsOn(github, issue)).toBe(2);
    });
  }, 90_000);
});
