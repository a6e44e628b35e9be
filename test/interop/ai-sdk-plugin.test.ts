import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import type { triageWorkflow } from '../../examples/interop/workflows.js';
import { activityTypes } from '../fixtures/history.js';
import { OWNER, REPO } from '../fixtures/responder.js';

let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  github = await new LocalGitHubServer().start();
}, 120_000);

afterAll(async () => {
  await github?.stop();
  await env?.teardown();
});

/** Starts test/fixtures/interop-worker.ts and resolves once it polls; the returned function stops it. */
async function startInteropWorker(vars: Record<string, string>): Promise<() => Promise<void>> {
  const script = fileURLToPath(new URL('../fixtures/interop-worker.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...vars },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready\n')) resolve();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(() => reject(new Error(`interop worker ended before it was ready:\n${output}`)));
  });
  return async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
}

describe('@temporalio/ai-sdk interop (examples/interop)', () => {
  it("a workflow-side AI SDK loop through the official plugin's provider calls chamvi effect tools: same protocol, same report", async () => {
    const issue = github.tracker.createIssue(OWNER, REPO, { title: 'interop', login: 'alice' }).number;
    const taskQueue = `interop-${randomUUID()}`;
    const stop = await startInteropWorker({
      TEMPORAL_ADDRESS: env.address,
      TASK_QUEUE: taskQueue,
      GITHUB_URL: github.url,
      ISSUE: String(issue),
    });
    try {
      const handle = await env.client.workflow.start<typeof triageWorkflow>('triageWorkflow', {
        taskQueue,
        workflowId: `triage-${randomUUID()}`,
        args: [{ issue, model: 'scripted' }],
      });
      const result = await handle.result();
      expect(result.text).toBe('Answered.');
      expect(github.tracker.listComments(OWNER, REPO, issue)).toHaveLength(1);
      // The first attempt crashed after posting; the retry found the comment (alreadyApplied).
      // The second call, in other words, had the same key: the recorded result, nothing posted.
      expect(result.effects.map((e) => [e.toolName, e.outcome, e.attempts])).toEqual([
        ['comment', 'reconciled', 2],
        ['comment', 'recorded', 1],
      ]);
      expect(result.effects[0]?.key).toBe(`${handle.firstExecutionRunId}:comment:${issue}`);
      // Model calls went through the official plugin's activity, tool calls through chamvi's.
      const types = await activityTypes(handle);
      expect(types.filter((t) => t === 'invokeModel')).toHaveLength(3);
      expect(types.filter((t) => t === 'chamvi.effectCall')).toHaveLength(2);
    } finally {
      await stop();
    }
  }, 120_000);
});
