// When a run's conversation starts its retention, on the time-skipping server: a run closes its
// conversation when no model step follows, whether the model answered, the step limit was reached
// (the agent's or the run's), or a stop condition ended the run. A run left open keeps its entries a
// year (ABANDONED_RUN_MS) instead of the store's retention; an execution that continued as new lets
// go of it when the next one takes over. A model-step attempt that outlived its start-to-close
// timeout and stores a final answer after the retry Temporal took does not close the run.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { hasToolCall, tool } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent, defineEffectTool, type Agent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { loadConversation } from '../../src/conversation/load-conversation.js';
import type { AppendConversationOptions } from '../../src/stores/conversation-store.js';
import type { ConversationEntry } from '../../src/conversation/conversation-entry.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { runAgentWorkflow, startAgentRun } from '../../client/start-agent-run.js';
import { decideApproval, listPendingApprovals } from '../../client/approvals-client.js';
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

const SECRET = 'approval-secret-for-tests-0123456789';

/**
 * Step 0 answered twice: its first Temporal attempt waits for `zombieAnswers` (a provider call that
 * ignores its abort signal) and then gives a final answer; every other attempt calls `deploy`.
 * Step 1 answers.
 */
function zombieModel(zombieAnswers: Promise<void>): LanguageModelV4 {
  const final = scriptedModel([{ text: 'Nothing to deploy.' }]);
  const goingOn = scriptedModel([
    { toolCalls: [{ toolName: 'deploy', input: { env: 'staging' } }] },
    { text: 'Deployed.' },
  ]);
  const pick = async (call: LanguageModelV4CallOptions): Promise<LanguageModelV4> => {
    const step = call.prompt.filter((m) => m.role === 'assistant').length;
    if (step !== 0 || Context.current().info.attempt !== 1) return goingOn;
    await zombieAnswers;
    return final;
  };
  return {
    specificationVersion: 'v4',
    provider: 'chamvi-zombie',
    modelId: 'zombie',
    supportedUrls: {},
    doGenerate: async (call) => (await pick(call)).doGenerate(call),
    doStream: async (call) => (await pick(call)).doStream(call),
  };
}

/** Polls `ready` every 50 ms, for up to 10 s. */
async function until(what: string, ready: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; !(await ready()); i++) {
    if (i > 200) throw new Error(`${what}: not in time`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("a zombie attempt's late final answer (time-skipping server)", () => {
  // Worker A runs step 0: attempt 1 outlives its 1 s start-to-close timeout, Temporal takes attempt
  // 2, which calls a tool that needs approval. While the run waits, attempt 1 answers at last with a
  // final answer and the activity stores it, closing the conversation as far as it knows. Worker A
  // goes away; the store's retention passes and it prunes; worker B (its own cache, so step 1 reads
  // the store) takes the approval and runs step 1.
  it("a model-step attempt that outlived its timeout and stores a final answer after the retry's tool call does not close the run: a prune past the retention while it waits for approval keeps its conversation", async () => {
    let now = Date.now();
    const writes: Array<{ attempt: number; close: boolean }> = [];
    /** The store, noting which attempt wrote and whether its write closed (in the order they landed). */
    class NotingStore extends MemoryEffectStore {
      override async appendConversation(
        runId: string,
        entries: readonly ConversationEntry[],
        options?: AppendConversationOptions,
      ): Promise<void> {
        await super.appendConversation(runId, entries, options);
        writes.push({ attempt: Context.current().info.attempt, close: options?.close === true });
      }
    }
    const store = new NotingStore({ retentionMs: RETENTION_MS, now: () => now });
    let zombieAnswers!: () => void;
    const answered = new Promise<void>((resolve) => (zombieAnswers = resolve));
    const deployed: unknown[] = [];
    const deploy = defineEffectTool({
      description: 'Deploys to an environment.',
      inputSchema: z.object({ env: z.string() }),
      needsApproval: true,
      execute: (input) => {
        deployed.push(input);
        return Promise.resolve({ deployed: true });
      },
    });
    const agent = defineAgent({ name: 'zombie-deployer', model: zombieModel(answered), tools: { deploy } });
    const taskQueue = `q-${randomUUID()}`;
    const worker = (cache: boolean) =>
      createAgentWorker({
        connection: env.nativeConnection,
        taskQueue,
        agents: [agent],
        store,
        approvalSecret: SECRET,
        // Without a cache, no sticky queue: worker B gets the run's next task at once.
        workerOptions: { workflowBundle: bundle, ...(cache ? {} : { maxCachedWorkflows: 0 }) },
      });
    const handle = await (
      await worker(false)
    ).runUntil(async () => {
      const h = await startAgentRun(env.client, {
        agent: agent.name,
        prompt: 'Deploy to staging.',
        taskQueue,
        activityOptions: { modelStep: { startToCloseTimeout: '1 second', retry: { initialInterval: '100 ms' } } },
      });
      await until(
        'the approval request',
        async () => (await listPendingApprovals(env.client, h.workflowId)).length > 0,
      );
      zombieAnswers();
      await until("the zombie's write", () => writes.some((w) => w.attempt === 1 && w.close));
      return h;
    });
    // The retry's write landed first, then the zombie's closing one.
    expect(writes).toEqual([
      { attempt: 2, close: false },
      { attempt: 1, close: true },
    ]);
    now += RETENTION_MS + 1;
    await store.prune();
    const output = await (
      await worker(true)
    ).runUntil(async () => {
      await decideApproval(env.client, handle.workflowId, { toolCallId: 'call-0-0', approved: true, secret: SECRET });
      return handle.result();
    });
    expect(output.text).toBe('Deployed.');
    expect(deployed).toEqual([{ env: 'staging' }]);
    const messages = await loadConversation(store, output);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(JSON.stringify(messages)).not.toContain('Nothing to deploy.');
  }, 60_000);
});
