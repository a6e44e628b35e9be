// Sub-agents on the Temporal dev server, with workers in their own processes, one SIGKILLed while
// the child runs, while the parent waits for it, right after the child's effect and right after
// the child ended; the GitHub fake counts the comments, the remote side's count of effects.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { inputFingerprint } from '../../src/index.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { startChildWorker, type ChildWorker } from '../fixtures/child-worker.js';
import { OWNER, REPO, openIssue } from '../fixtures/responder.js';
import { runCli } from '../product/run-cli.js';

let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;
let dir: string;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  github = await new LocalGitHubServer().start();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-sub-'));
}, 120_000);

afterAll(async () => {
  await github?.stop();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const TASK = 'Hello from the scribe.';
const CHILD = `delegate:0:${inputFingerprint({ prompt: TASK }).slice(0, 16)}`;
// Short heartbeats, so a step of a killed worker is retried in seconds; the child gets the parent's.
const quick = {
  modelStep: { heartbeatTimeout: '2 seconds', retry: { initialInterval: '100 ms', maximumInterval: '500 ms' } },
} as const;

/** The issue's comment bodies, first lines, oldest first. */
function bodies(issue: number): string[] {
  return (github.tracker.listComments(OWNER, REPO, issue) ?? []).map((c) => c.body.split('\n')[0] ?? '');
}

/** A fresh issue, task queue and store; workers on them, and the run. */
function scenario() {
  const issue = openIssue(github);
  const taskQueue = `q-${randomUUID()}`;
  const workflowId = `lead-${randomUUID()}`;
  const store = `sqlite:${join(dir, `effects-${randomUUID()}.db`)}`;
  const common = {
    TEMPORAL_ADDRESS: env.address,
    TASK_QUEUE: taskQueue,
    GITHUB_URL: github.url,
    ISSUE: String(issue),
    STORE: store,
  };
  const workers: ChildWorker[] = [];
  return {
    issue,
    store,
    workflowId,
    childId: `${workflowId}:${CHILD}`,
    worker: async (extra: Record<string, string> = {}) => {
      const worker = await startChildWorker({ ...common, ...extra }, './sub-agent-worker.ts');
      workers.push(worker);
      return worker;
    },
    start: () =>
      startAgentRun(env.client, { agent: 'lead', prompt: 'Delegate.', taskQueue, workflowId, activityOptions: quick }),
    stop: () => Promise.all(workers.map((w) => w.stop())),
  };
}

/** How many executions the child's workflow id has had (a second would mean the child was started again). */
async function childExecutions(childId: string): Promise<number> {
  let count = 0;
  for await (const _ of env.client.workflow.list({ query: `WorkflowId = '${childId}'` })) count++;
  return count;
}

const ANSWER = `lead got {"type":"text","value":"Posted: ${TASK}"}`;

describe('sub-agents on the dev server, with worker processes', () => {
  it('a worker SIGKILLed while the child is about to comment: the next worker posts the one comment', async () => {
    const s = scenario();
    try {
      const doomed = await s.worker({ CRASH: 'before-comment', SLOW_MS: '60000' });
      const handle = await s.start();
      await doomed.printed(/commenting/);
      doomed.process.kill('SIGKILL');
      expect(await doomed.exited).toBe('SIGKILL');
      expect(bodies(s.issue)).toEqual([]);
      await s.worker();
      const output = await handle.result();
      expect(output.text).toBe(ANSWER);
      expect(bodies(s.issue)).toEqual([TASK]);
      expect(output.children?.[0]?.effects?.map((e) => e.outcome)).toEqual(['executed']);
      expect(await childExecutions(s.childId)).toBe(1);
    } finally {
      await s.stop();
    }
  }, 120_000);

  it("a worker SIGKILLed right after the child's comment and before its record: the retry finds it, one comment", async () => {
    const s = scenario();
    try {
      const doomed = await s.worker({ CRASH: 'after-comment' });
      const handle = await s.start();
      expect(await doomed.exited).toBe('SIGKILL');
      expect(bodies(s.issue)).toEqual([TASK]);
      await s.worker();
      const output = await handle.result();
      expect(output.text).toBe(ANSWER);
      expect(bodies(s.issue)).toEqual([TASK]);
      expect(output.children?.[0]?.effects?.map((e) => e.outcome)).toEqual(['reconciled']);
      expect(output.children?.[0]?.effects?.[0]?.key).toMatch(new RegExp(`^${output.runId}:${CHILD}:comment:`));
      expect(await childExecutions(s.childId)).toBe(1);
      // `chamvi show` of the parent lists the child and its effect call after the conversation.
      const shown = await runCli(['show', s.workflowId, '--store', s.store, '--address', env.address]);
      expect(shown.code).toBe(0);
      expect(shown.stdout.trim().split('\n').slice(-3)).toEqual([
        'sub-agent runs:',
        `  scribe via delegate [call-0-0] (step 0): completed, 2 steps · workflow ${s.childId}`,
        `    comment [call-0-0] reconciled (2 attempts) · ${output.children?.[0]?.effects?.[0]?.key ?? ''}`,
      ]);
    } finally {
      await s.stop();
    }
  }, 120_000);

  it('a worker SIGKILLed while the child runs its next step and the parent waits: the comment is not posted again', async () => {
    const s = scenario();
    try {
      const doomed = await s.worker({ CRASH: 'scribe-step-1', SLOW_MS: '60000' });
      const handle = await s.start();
      await doomed.printed(/scribe step 1/);
      expect(bodies(s.issue)).toEqual([TASK]);
      doomed.process.kill('SIGKILL');
      await doomed.exited;
      await s.worker();
      const output = await handle.result();
      expect(output.text).toBe(ANSWER);
      expect(bodies(s.issue)).toEqual([TASK]);
      expect(output.children?.[0]?.effects?.map((e) => e.outcome)).toEqual(['executed']);
      expect(await childExecutions(s.childId)).toBe(1);
    } finally {
      await s.stop();
    }
  }, 120_000);

  it("a worker SIGKILLed in the parent's next step, after the child ended: the child is not run again", async () => {
    const s = scenario();
    try {
      const doomed = await s.worker({ CRASH: 'lead-step-1' });
      const handle = await s.start();
      expect(await doomed.exited).toBe('SIGKILL');
      expect(bodies(s.issue)).toEqual([TASK]);
      await s.worker();
      const output = await handle.result();
      expect(output.text).toBe(ANSWER);
      expect(bodies(s.issue)).toEqual([TASK]);
      expect(output.children).toEqual([
        expect.objectContaining({ status: 'completed', workflowId: s.childId, steps: 2 }),
      ]);
      expect(await childExecutions(s.childId)).toBe(1);
    } finally {
      await s.stop();
    }
  }, 120_000);
});
