import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { chamviWorkflowsPath, createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { createResponder, OWNER, REPO } from '../fixtures/responder.js';
import { quietLogger } from '../fixtures/bundle.js';

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

describe('workflow determinism', () => {
  it('the workflows bundle for the sandbox without Node builtins, ai or zod', async () => {
    const { code } = await bundleWorkflowCode({ workflowsPath: chamviWorkflowsPath(), logger: quietLogger });
    expect(code).toContain('agentWorkflow');
    expectSandboxSafe(code);
    // The library's own modules in the bundle: workflow code, the shared contract, and the
    // sandbox-safe modules of the core (the errors the workflow fails with and their catalogue, the
    // approval token format the gate's validator reads), nothing else.
    const own = ownModules(code);
    expect(own).toEqual(expect.arrayContaining(['workflows/agent-loop.ts', 'common/activity-options.ts']));
    expect(own.filter((path) => !path.startsWith('workflows/') && !path.startsWith('common/')).sort()).toEqual([
      'src/approvals/approval-token-format.ts',
      'src/errors/chamvi-error.ts',
      'src/errors/errors.ts',
      'src/errors/failure-policy.ts',
    ]);
  });

  it('the whole shared contract (common/) bundles for the sandbox, also what the workflows do not import', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../../common/index.ts', import.meta.url)),
      logger: quietLogger,
    });
    expectSandboxSafe(code);
    const own = ownModules(code);
    expect(own).toContain('common/index.ts');
    expect(own.filter((path) => !path.startsWith('common/'))).toEqual(['src/errors/failure-policy.ts']);
  });

  it('a recorded agent run replays against the same workflow code', async () => {
    const issue = github.tracker.createIssue(OWNER, REPO, { title: 'replay', login: 'alice' }).number;
    const taskQueue = `q-${randomUUID()}`;
    const agent = createResponder({
      githubUrl: github.url,
      model: scriptedModel([{ toolCalls: [{ toolName: 'comment', input: { issue, body: 'hi' } }] }, { text: 'Done.' }]),
    });
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
    });
    const handle = await worker.runUntil(async () => {
      const h = await startAgentRun(env.client, { agent: 'responder', prompt: 'go', taskQueue });
      await h.result();
      return h;
    });
    const history = await handle.fetchHistory();
    await expect(
      Worker.runReplayHistory({ workflowsPath: chamviWorkflowsPath() }, history, handle.workflowId),
    ).resolves.toBeUndefined();
  });
});

function expectSandboxSafe(code: string): void {
  for (const forbidden of [
    'node_modules/ai/',
    'node_modules/zod/',
    'node_modules/@ai-sdk/',
    'node:crypto',
    'node:fs',
  ]) {
    expect(code).not.toContain(forbidden);
  }
}

/** The repository's own modules a bundle holds (webpack names each by its path from the root). */
function ownModules(code: string): string[] {
  const paths = [...code.matchAll(/"\.\/((?:[\w-]+\/)+[\w.-]+\.ts)"/g)].map((m) => m[1] ?? '');
  return [...new Set(paths)].filter((path) => !path.startsWith('node_modules/')).sort();
}
