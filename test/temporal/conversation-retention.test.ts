// When a run's conversation starts its retention, on the time-skipping server: a run closes its
// conversation when no model step follows, whether the model answered, the step limit was reached
// (the agent's or the run's), or a stop condition ended the run. A run left open keeps its entries a
// year (ABANDONED_RUN_MS) instead of the store's retention; an execution that continued as new lets
// go of it when the next one takes over.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { hasToolCall, tool } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent, type Agent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { runAgentWorkflow } from '../../client/start-agent-run.js';
import type { AgentRunOutput } from '../../workflows/agent-loop.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

const RETENTION_MS = 60_000;

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

const lookup = tool({
  description: 'Looks an issue up.',
  inputSchema: z.object({ issue: z.number() }),
  execute: ({ issue }) => Promise.resolve({ issue, state: 'open' }),
});

/** A model that looks issue 1 up at every step, and would answer only at its fourth. */
const lookingModel = () =>
  scriptedModel([
    { toolCalls: [{ toolName: 'lookup', input: { issue: 1 } }] },
    { toolCalls: [{ toolName: 'lookup', input: { issue: 1 } }] },
    { toolCalls: [{ toolName: 'lookup', input: { issue: 1 } }] },
    { text: 'Issue 1 is open.' },
  ]);

/**
 * Runs `agent` once on a fresh task queue with a store on a hand-moved clock, then reports whether
 * the run's conversation is still there right after the run, and once the store's retention has
 * passed and it pruned.
 */
async function retentionOf(
  agent: Agent,
  runOptions: { maxSteps?: number; continueAsNewAfterSteps?: number } = {},
): Promise<{ output: AgentRunOutput; afterRun: boolean; afterRetention: boolean }> {
  let now = Date.now();
  const store = new MemoryEffectStore({ retentionMs: RETENTION_MS, now: () => now });
  const taskQueue = `q-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [agent],
    store,
    workerOptions: { workflowBundle: bundle },
  });
  const output = await worker.runUntil(
    runAgentWorkflow(env.client, {
      taskQueue,
      workflowId: `retention-${randomUUID()}`,
      agent: agent.name,
      prompt: 'Look issue 1 up.',
      ...runOptions,
    }),
  );
  const head = output.conversation?.head;
  if (head === undefined) throw new Error('the run reported no conversation head');
  const afterRun = (await store.loadConversation(head)) !== undefined;
  now += RETENTION_MS + 1;
  await store.prune();
  return { output, afterRun, afterRetention: (await store.loadConversation(head)) !== undefined };
}

describe("a run's conversation starts its retention when no model step follows (time-skipping server)", () => {
  it('a run the model ends with its answer is pruned once the retention has passed', async () => {
    const agent = defineAgent({ name: 'retention-answer', model: lookingModel(), tools: { lookup } });
    const { output, afterRun, afterRetention } = await retentionOf(agent);
    expect(output.text).toBe('Issue 1 is open.');
    expect({ afterRun, afterRetention }).toEqual({ afterRun: true, afterRetention: false });
  }, 60_000);

  it("a run ended by the agent's step limit, with a tool call unanswered, is pruned once the retention has passed", async () => {
    const agent = defineAgent({ name: 'retention-limit', model: lookingModel(), tools: { lookup }, maxSteps: 2 });
    const { output, afterRun, afterRetention } = await retentionOf(agent);
    expect(output.steps).toHaveLength(2);
    expect(output.conversation?.pending).toBeDefined();
    expect({ afterRun, afterRetention }).toEqual({ afterRun: true, afterRetention: false });
  }, 60_000);

  it("a run ended by the run's own maxSteps, below the agent's, is pruned once the retention has passed", async () => {
    const agent = defineAgent({ name: 'retention-run-limit', model: lookingModel(), tools: { lookup } });
    const { output, afterRun, afterRetention } = await retentionOf(agent, { maxSteps: 1 });
    expect(output.steps).toHaveLength(1);
    expect({ afterRun, afterRetention }).toEqual({ afterRun: true, afterRetention: false });
  }, 60_000);

  it('a run ended by a stop condition is pruned once the retention has passed, its last tool results stored', async () => {
    const agent = defineAgent({
      name: 'retention-stop',
      model: lookingModel(),
      tools: { lookup },
      stopWhen: hasToolCall('lookup'),
    });
    const { output, afterRun, afterRetention } = await retentionOf(agent);
    expect(output.steps).toHaveLength(1);
    expect({ afterRun, afterRetention }).toEqual({ afterRun: true, afterRetention: false });
  }, 60_000);

  it('a run that continued as new after every step is pruned once the retention has passed: each execution let go when the next began', async () => {
    const agent = defineAgent({ name: 'retention-continued', model: lookingModel(), tools: { lookup } });
    const { output, afterRun, afterRetention } = await retentionOf(agent, { continueAsNewAfterSteps: 1 });
    expect(output.text).toBe('Issue 1 is open.');
    expect(output.steps).toHaveLength(4);
    expect({ afterRun, afterRetention }).toEqual({ afterRun: true, afterRetention: false });
  }, 60_000);
});
