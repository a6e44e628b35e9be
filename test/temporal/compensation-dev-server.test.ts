// Compensation on the Temporal dev server, with workers in their own processes (one SIGKILLed) and
// the GitHub fake as the remote. Each comment's undo deletes it and posts a retraction, an append:
// the remote's count of retractions is the exact count of undos applied.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { startAgentRun, type StartAgentRunOptions } from '../../client/start-agent-run.js';
import { agentProgressQuery } from '../../common/agent-progress.js';
import { startChildWorker, type ChildWorker } from '../fixtures/child-worker.js';
import { OWNER, REPO, openIssue } from '../fixtures/responder.js';
import { runCli } from '../product/run-cli.js';

let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;
let dir: string;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  github = await new LocalGitHubServer().start();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-comp-'));
}, 120_000);

afterAll(async () => {
  await github?.stop();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const compensate = {
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '100 ms', maximumInterval: '500 ms', maximumAttempts: 20 },
} as const;

/** The issue's comments as their first lines, oldest first. */
function bodies(issue: number): string[] {
  return (github.tracker.listComments(OWNER, REPO, issue) ?? []).map((c) => c.body.split('\n')[0] ?? '');
}

/** A fresh issue, task queue and store, and how to start workers and the run on them. */
function scenario(script: 'fail' | 'wait') {
  const issue = openIssue(github);
  const taskQueue = `q-${randomUUID()}`;
  const store = `sqlite:${join(dir, `effects-${randomUUID()}.db`)}`;
  const common = {
    TEMPORAL_ADDRESS: env.address,
    TASK_QUEUE: taskQueue,
    GITHUB_URL: github.url,
    ISSUE: String(issue),
    STORE: store,
    SCRIPT: script,
  };
  const workers: ChildWorker[] = [];
  return {
    issue,
    store,
    worker: async (extra: Record<string, string> = {}) => {
      const worker = await startChildWorker({ ...common, ...extra }, './compensation-worker.ts');
      workers.push(worker);
      return worker;
    },
    start: (options: Pick<StartAgentRunOptions, 'compensateOn'>) =>
      startAgentRun(env.client, {
        agent: 'retractor',
        prompt: 'Comment, then fail.',
        taskQueue,
        workflowId: `compensation-${randomUUID()}`,
        activityOptions: { modelStep: { retry: { maximumAttempts: 1 } }, compensate },
        ...options,
      }),
    stop: () => Promise.all(workers.map((w) => w.stop())),
  };
}

async function ended(promise: Promise<unknown>): Promise<WorkflowFailedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  return error as WorkflowFailedError;
}

describe('compensation on the dev server, with worker processes', () => {
  it('a run that fails after three applied effects undoes all three, last first: 3 comments, 3 deletes, 3 retractions', async () => {
    const s = scenario('fail');
    try {
      await s.worker();
      const handle = await s.start({ compensateOn: ['failure'] });
      await ended(handle.result());
      expect(bodies(s.issue)).toEqual(['Retracted: c', 'Retracted: b', 'Retracted: a']);
      expect(github.counters(OWNER, REPO, s.issue)).toMatchObject({ commentsCreated: 6, commentsDeleted: 3 });
      const progress = await handle.query(agentProgressQuery);
      expect(progress.status).toBe('rolled-back');
      expect(progress.effects.map((e) => e.compensation?.status)).toEqual([
        'compensated',
        'compensated',
        'compensated',
      ]);
    } finally {
      await s.stop();
    }
  }, 120_000);

  it('a worker SIGKILLed right after an undo and before its record: the next worker does not undo it again', async () => {
    const s = scenario('fail');
    try {
      const doomed = await s.worker({ CRASH: 'after-retraction' });
      const handle = await s.start({ compensateOn: ['failure'] });
      expect(await doomed.exited).toBe('SIGKILL');
      expect(bodies(s.issue)).toEqual(['a', 'b', 'Retracted: c']);
      await s.worker();
      await ended(handle.result());
      // One retraction per comment: the retried undo of c found its retraction (alreadyCompensated).
      expect(bodies(s.issue)).toEqual(['Retracted: c', 'Retracted: b', 'Retracted: a']);
      expect(github.counters(OWNER, REPO, s.issue)).toMatchObject({ commentsCreated: 6, commentsDeleted: 3 });
      const { effects } = await handle.query(agentProgressQuery);
      expect(effects.map((e) => e.compensation)).toEqual([
        { status: 'compensated', outcome: 'executed', attempts: 1 },
        { status: 'compensated', outcome: 'executed', attempts: 1 },
        { status: 'compensated', outcome: 'reconciled', attempts: 2 },
      ]);
    } finally {
      await s.stop();
    }
  }, 120_000);

  it('a cancel that arrives during the compensations cuts none of them short: 3 retractions, and the run fails as it was failing', async () => {
    const s = scenario('fail');
    try {
      const worker = await s.worker({ SLOW_UNDO_MS: '1500' });
      const handle = await s.start({ compensateOn: ['failure', 'cancel'] });
      await worker.printed(/undoing c/);
      await handle.cancel();
      await ended(handle.result());
      expect(bodies(s.issue)).toEqual(['Retracted: c', 'Retracted: b', 'Retracted: a']);
      expect((await handle.describe()).status.name).toBe('FAILED');
      expect((await handle.query(agentProgressQuery)).status).toBe('rolled-back');
    } finally {
      await s.stop();
    }
  }, 120_000);

  it('a cancelled run with compensateOn cancel undoes its three effects, last first, and ends cancelled', async () => {
    const s = scenario('wait');
    try {
      const worker = await s.worker();
      const handle = await s.start({ compensateOn: ['cancel'] });
      await worker.printed(/waiting/);
      await handle.cancel();
      await ended(handle.result());
      expect(bodies(s.issue)).toEqual(['Retracted: c', 'Retracted: b', 'Retracted: a']);
      expect((await handle.describe()).status.name).toBe('CANCELLED');
    } finally {
      await s.stop();
    }
  }, 120_000);

  it('a compensation that fails while the remote is down succeeds once it is back, after as many attempts', async () => {
    const s = scenario('fail');
    try {
      await s.worker();
      github.failNextRequest('deleteComment', 503, 4);
      const handle = await s.start({ compensateOn: ['failure'] });
      await ended(handle.result());
      expect(bodies(s.issue)).toEqual(['Retracted: c', 'Retracted: b', 'Retracted: a']);
      expect(github.counters(OWNER, REPO, s.issue)).toMatchObject({ commentsCreated: 6, commentsDeleted: 3 });
      const { effects } = await handle.query(agentProgressQuery);
      expect(effects[2]?.compensation).toEqual({ status: 'compensated', outcome: 'executed', attempts: 5 });
      // `chamvi show` lists the undone calls after the conversation.
      const shown = await runCli(['show', handle.workflowId, '--store', s.store, '--address', env.address]);
      expect(shown.code).toBe(0);
      const lines = shown.stdout.trim().split('\n');
      expect(lines.slice(-4)).toEqual([
        'compensations (rolled back, 3 undone):',
        expect.stringMatching(/^ {2}comment \[call-0-0\] compensated \(executed, 1 attempt\) · /),
        expect.stringMatching(/^ {2}comment \[call-1-0\] compensated \(executed, 1 attempt\) · /),
        expect.stringMatching(/^ {2}comment \[call-2-0\] compensated \(executed, 5 attempts\) · /),
      ]);
    } finally {
      await s.stop();
    }
  }, 120_000);
});
