import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { AGENT_SEARCH_ATTRIBUTE, startAgentRun } from '../../client/start-agent-run.js';
import { noter } from '../product/fixtures/note-agents.js';

const AGENT = defineSearchAttributeKey(AGENT_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);
const TEAM = defineSearchAttributeKey('Team', SearchAttributeType.KEYWORD);

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `start-options-${randomUUID()}`;

beforeAll(async () => {
  // The dev server's `--search-attribute` flag, as the README says to register them.
  env = await createDevServerEnvironment({ searchAttributes: [AGENT, TEAM] });
  worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [noter],
    store: new MemoryEffectStore(),
  });
  running = worker.run();
}, 120_000);

afterAll(async () => {
  if (worker !== undefined) {
    worker.shutdown();
    await running;
  }
  await env?.teardown();
});

/** Workflow ids a visibility query lists, once it lists `expected` (visibility lags a little). */
async function listed(query: string, expected: string): Promise<string[]> {
  let ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    ids = [];
    for await (const execution of env.client.workflow.list({ query })) ids.push(execution.workflowId);
    if (ids.includes(expected)) return ids;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return ids;
}

describe('startAgentRun passes the start options through', () => {
  it('memo, search attributes, the agent search attribute, static summary and details, retry policy: a list query finds the run by agent', async () => {
    const workflowId = `start-options-${randomUUID()}`;
    const handle = await startAgentRun(env.client, {
      agent: 'noter',
      prompt: 'note it',
      taskQueue,
      workflowId,
      memo: { ticket: 'T-42' },
      typedSearchAttributes: [{ key: TEAM, value: 'ops' }],
      agentSearchAttribute: true,
      staticSummary: 'Notes ticket T-42',
      staticDetails: 'Started by the start-options test.',
      retry: { maximumAttempts: 2, initialInterval: '1 second' },
    });
    await handle.result();
    const description = await handle.describe();
    expect(description.memo).toEqual({ ticket: 'T-42' });
    expect(description.typedSearchAttributes.get(AGENT)).toBe('noter');
    expect(description.typedSearchAttributes.get(TEAM)).toBe('ops');
    expect(await description.staticSummary()).toBe('Notes ticket T-42');
    expect(await description.staticDetails()).toBe('Started by the start-options test.');
    const started = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
    expect(started?.retryPolicy?.maximumAttempts).toBe(2);

    expect(await listed(`${AGENT_SEARCH_ATTRIBUTE} = "noter" AND Team = "ops"`, workflowId)).toContain(workflowId);
    expect(await listed(`${AGENT_SEARCH_ATTRIBUTE} = "someone-else"`, workflowId)).not.toContain(workflowId);
  }, 60_000);

  it('the id conflict policy USE_EXISTING hands back the running run; the reuse policy REJECT_DUPLICATE refuses a closed id', async () => {
    const workflowId = `start-policies-${randomUUID()}`;
    const blocked = await startAgentRun(env.client, {
      agent: 'noter',
      prompt: 'note it',
      taskQueue: `nobody-${randomUUID()}`,
      workflowId,
    });
    const again = await startAgentRun(env.client, {
      agent: 'noter',
      prompt: 'note it',
      taskQueue,
      workflowId,
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    expect(again.firstExecutionRunId).toBe(blocked.firstExecutionRunId);
    await blocked.terminate('test over');

    const done = `start-reuse-${randomUUID()}`;
    await (
      await startAgentRun(env.client, { agent: 'noter', prompt: 'note it', taskQueue, workflowId: done })
    ).result();
    await expect(
      startAgentRun(env.client, {
        agent: 'noter',
        prompt: 'note it',
        taskQueue,
        workflowId: done,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      }),
    ).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
  }, 60_000);

  it('without agentSearchAttribute the run carries no agent search attribute (servers that never registered one keep starting runs)', async () => {
    const handle = await startAgentRun(env.client, { agent: 'noter', prompt: 'note it', taskQueue });
    await handle.result();
    expect((await handle.describe()).typedSearchAttributes.get(AGENT)).toBeUndefined();
  }, 30_000);
});
