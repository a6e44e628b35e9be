import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { startChildWorker, type ChildWorker } from '../fixtures/child-worker.js';
import { commentsOn, openIssue } from '../fixtures/responder.js';

// An execute that ignores its abort signal (a slow HTTP call, as users write it) outlives its
// attempt: Temporal gives up on it (a cancel, a start-to-close timeout) and runs the call again in
// another worker process while the first one is still on its way to the remote. Only the claim,
// held as long as that execute runs, keeps the second process from posting beside it: the
// comment lands after the second process has already asked the remote, so alreadyApplied alone
// cannot see it.

// Long enough for the cancel to reach the first attempt by heartbeat and its lease to run out
// well before its comment lands.
const SLOW_MS = 12_000;
let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;
let dir: string;
const workers: ChildWorker[] = [];

beforeAll(async () => {
  env = await createDevServerEnvironment();
  github = await new LocalGitHubServer().start();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-careless-'));
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await github?.stop();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

/** Two worker processes on one SQLite store; the first has one activity slot, held by its slow comment. */
async function twoWorkers(issue: number, extra: Record<string, string> = {}) {
  const taskQueue = `q-${randomUUID()}`;
  const common = {
    TEMPORAL_ADDRESS: env.address,
    TASK_QUEUE: taskQueue,
    GITHUB_URL: github.url,
    ISSUE: String(issue),
    STORE: `sqlite:${join(dir, `effects-${randomUUID()}.db`)}`,
    ...extra,
  };
  // Only the first process is slow: the second posts at once if it ever gets to execute.
  const first = await startChildWorker({ ...common, ACTIVITY_SLOTS: '1', SLOW_COMMENT_MS: String(SLOW_MS) });
  workers.push(first);
  return {
    taskQueue,
    first,
    /** Resolves once the first process is inside the slow execute, with the time it got there. */
    executing: async (): Promise<number> => {
      await first.printed(/executing 1\n/);
      return Date.now();
    },
    /** Starts the second process once the first is inside the slow execute (so retries land there). */
    second: async () => {
      await first.printed(/executing 1\n/);
      const second = await startChildWorker(common);
      workers.push(second);
      return second;
    },
  };
}

/** After the run, waits out every execute still in flight, then counts what reached the remote. */
async function settledComments(issue: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, SLOW_MS + 1_000));
  return commentsOn(github, issue);
}

describe('an execute that ignores its abort signal, on the dev server with two worker processes', () => {
  it('a start-to-close timeout while execute is still running leaves exactly one comment: the retry waits for the claim, then finds the record', async () => {
    const issue = openIssue(github);
    const { taskQueue, second } = await twoWorkers(issue, { COMMENT_TIMEOUT: '2 seconds' });
    const handle = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer issue ${issue}`, taskQueue });
    await second();
    const result = await handle.result();
    expect(await settledComments(issue)).toBe(1);
    const [comment] = result.effects;
    expect(comment).toMatchObject({ toolName: 'comment', outcome: 'recorded' });
    expect(comment?.attempts).toBeGreaterThan(1);
  }, 120_000);

  it('a cancelled run rerun with the same run id while execute is still running leaves exactly one comment', async () => {
    const issue = openIssue(github);
    const { taskQueue, executing, second } = await twoWorkers(issue);
    const runId = `run-${randomUUID()}`;
    const prompt = `Answer issue ${issue}`;
    const cancelled = await startAgentRun(env.client, { agent: 'responder', prompt, taskQueue, runId });
    // Cancelled as soon as execute runs, before the second process starts (its start can take
    // seconds on a loaded machine, and execute must still be running when the rerun begins).
    const executingAt = await executing();
    await cancelled.cancel();
    await expect(cancelled.result()).rejects.toThrow();
    await second();
    // Otherwise the rerun would only find a record, and this test would guard nothing.
    expect(Date.now() - executingAt).toBeLessThan(SLOW_MS);
    const rerun = await startAgentRun(env.client, { agent: 'responder', prompt, taskQueue, runId });
    const result = await rerun.result();
    expect(await settledComments(issue)).toBe(1);
    expect(result.effects).toEqual([expect.objectContaining({ toolName: 'comment', outcome: 'recorded' })]);
  }, 120_000);
});
