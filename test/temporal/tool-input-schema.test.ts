// The tool activities parse a call's input with the tool's schema as the worker that runs them
// defines it (time-skipping server): a redeploy with a stricter schema while a call waited for
// approval, a worker whose schema differs from the planner's, or workflow code calling an effect
// tool with a bad input: `execute` never runs with an input its schema refuses, and the model is
// told as for an invalid input in the model step.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { tool } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent, defineEffectTool, type Agent } from '../../src/index.js';
import { loadConversation } from '../../src/conversation/load-conversation.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel, type ScriptEntry } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker, type AgentRegistration } from '../../worker/index.js';
import { decideApproval, listPendingApprovals } from '../../client/approvals-client.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import type { AgentRunOutput } from '../../workflows/agent-loop.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import type { directEffectCallWorkflow } from '../fixtures/workflows.js';

const SECRET = 'approval-secret-for-tests-0123456789';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** Runs a worker on `taskQueue` for `registrations` while `body` runs (no workflow cache when `cache` is false). */
async function withWorker<T>(
  taskQueue: string,
  registrations: AgentRegistration[],
  store: MemoryEffectStore,
  body: () => Promise<T>,
  cache = true,
): Promise<T> {
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: registrations,
    store,
    approvalSecret: SECRET,
    // Without a cache, no sticky queue: the next worker on the queue gets the run's next task at once.
    workerOptions: { workflowBundle: bundle, ...(cache ? {} : { maxCachedWorkflows: 0 }) },
  });
  return worker.runUntil(body());
}

/** What the model was told about its tool calls, as the text of the run's tool messages. */
async function toldToModel(store: MemoryEffectStore, result: AgentRunOutput): Promise<string> {
  return JSON.stringify((await loadConversation(store, result)).filter((m) => m.role === 'tool'));
}

/** The attempt each activity of a run ended on, in order. */
async function attemptsOf(handle: WorkflowHandle): Promise<number[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const started = e.activityTaskStartedEventAttributes;
    return started ? [started.attempt ?? 0] : [];
  });
}

/** An effect tool `post` with `schema`, recording each input its `execute` gets in `ran`. */
function postTool(schema: z.ZodType<{ body: string }>, ran: unknown[], needsApproval = false) {
  return defineEffectTool({
    description: 'Posts a message.',
    inputSchema: schema,
    needsApproval,
    execute: (input) => {
      ran.push(input);
      return Promise.resolve({ posted: true });
    },
  });
}

const poster = (script: readonly ScriptEntry[], post: ReturnType<typeof postTool>): Agent =>
  defineAgent({ name: 'poster', model: scriptedModel(script), tools: { post } });

describe("tool input parsed with the executing worker's schema (time-skipping server)", () => {
  it('an effect call approved after a redeploy with a stricter schema never runs execute: the model is told InvalidToolInputError', async () => {
    const store = new MemoryEffectStore();
    const taskQueue = `q-${randomUUID()}`;
    const ran: unknown[] = [];
    const body = 'A long announcement that the new schema no longer accepts.';
    const before = poster(
      [{ toolCalls: [{ toolName: 'post', input: { body } }] }],
      postTool(z.object({ body: z.string() }), ran, true),
    );
    const handle = await withWorker(
      taskQueue,
      [{ agent: before }],
      store,
      async () => {
        const h = await startAgentRun(env.client, { agent: 'poster', prompt: 'Announce it.', taskQueue });
        for (let i = 0; (await listPendingApprovals(env.client, h.workflowId)).length === 0; i++) {
          if (i > 200) throw new Error('no pending approval in time');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return h;
      },
      false,
    );
    await env.sleep('2 days');
    // The redeploy: the same agent, its tool's schema now caps the body at 20 characters.
    const after = poster(
      [{ text: 'unused' }, { text: 'Understood, shorter next time.' }],
      postTool(z.object({ body: z.string().max(20) }), ran, true),
    );
    const result = await withWorker(taskQueue, [{ agent: after }], store, async () => {
      await decideApproval(env.client, handle.workflowId, { toolCallId: 'call-0-0', approved: true, secret: SECRET });
      return handle.result();
    });
    expect(ran).toEqual([]);
    expect(result.text).toBe('Understood, shorter next time.');
    expect(result.effects).toEqual([
      expect.objectContaining({
        toolName: 'post',
        outcome: 'failed',
        attempts: 1,
        error: expect.objectContaining({ type: 'InvalidToolInputError' }),
      }),
    ]);
    const told = await toldToModel(store, result);
    expect(told).toMatch(
      /InvalidToolInputError: Invalid input for tool post: AI_TypeValidationError: Type validation failed/,
    );
  });

  it('a plain tool call whose schema on the executing worker is stricter than the planner’s never runs execute: the model is told InvalidToolInputError', async () => {
    const store = new MemoryEffectStore();
    const [planning, executing] = [`q-${randomUUID()}`, `q-${randomUUID()}`];
    const ran: unknown[] = [];
    const lookup = (schema: z.ZodType<{ id: number }>) =>
      tool({
        description: 'Looks an order up.',
        inputSchema: schema,
        execute: (input) => {
          ran.push(input);
          return Promise.resolve({ found: true });
        },
      });
    const planner = defineAgent({
      name: 'looker',
      model: scriptedModel([{ toolCalls: [{ toolName: 'lookup', input: { id: -3 } }] }, { text: 'No such order.' }]),
      tools: { lookup: lookup(z.object({ id: z.number() })) },
    });
    const executor = defineAgent({
      name: 'looker',
      model: scriptedModel([]),
      tools: { lookup: lookup(z.object({ id: z.number().int().positive() })) },
    });
    // The planner's registration sends the tool's activity to the other worker's task queue.
    const result = await withWorker(executing, [{ agent: executor }], store, () =>
      withWorker(planning, [{ agent: planner, tools: { lookup: { taskQueue: executing } } }], store, async () =>
        (await startAgentRun(env.client, { agent: 'looker', prompt: 'Find order -3.', taskQueue: planning })).result(),
      ),
    );
    expect(ran).toEqual([]);
    expect(result.text).toBe('No such order.');
    const told = await toldToModel(store, result);
    expect(told).toMatch(
      /InvalidToolInputError: Invalid input for tool lookup: AI_TypeValidationError: Type validation failed/,
    );
    expect(told).toContain('too_small');
  });

  it('a planned effect call whose input the executing worker’s schema reads differently (a default added since) is refused, not run with another input than was planned', async () => {
    const store = new MemoryEffectStore();
    const [planning, executing] = [`q-${randomUUID()}`, `q-${randomUUID()}`];
    const ran: unknown[] = [];
    const planner = poster(
      [{ toolCalls: [{ toolName: 'post', input: { body: 'hi' } }] }, { text: 'Noted.' }],
      postTool(z.object({ body: z.string() }), ran),
    );
    const executor = poster(
      [],
      postTool(z.object({ body: z.string(), visibility: z.enum(['public', 'team']).default('team') }), ran),
    );
    const result = await withWorker(executing, [{ agent: executor }], store, () =>
      withWorker(planning, [{ agent: planner, tools: { post: { taskQueue: executing } } }], store, async () =>
        (await startAgentRun(env.client, { agent: 'poster', prompt: 'Say hi.', taskQueue: planning })).result(),
      ),
    );
    expect(ran).toEqual([]);
    expect(result.effects).toEqual([
      expect.objectContaining({ outcome: 'failed', error: expect.objectContaining({ type: 'InvalidToolInputError' }) }),
    ]);
    expect(await toldToModel(store, result)).toContain('turns the planned input into another value');
  });

  it('effectToolCalls from a user workflow with an input the schema refuses fails with InvalidToolInputError, not retried, and execute never runs', async () => {
    const store = new MemoryEffectStore();
    const taskQueue = `q-${randomUUID()}`;
    const ran: unknown[] = [];
    const agent = poster([], postTool(z.object({ body: z.string().min(1) }), ran));
    const { result, attempts } = await withWorker(taskQueue, [{ agent }], store, async () => {
      const handle = await env.client.workflow.start<typeof directEffectCallWorkflow>('directEffectCallWorkflow', {
        taskQueue,
        workflowId: `direct-${randomUUID()}`,
        args: [{ agent: 'poster', toolName: 'post', toolInput: { body: '' } }],
      });
      return { result: await handle.result(), attempts: await attemptsOf(handle) };
    });
    expect(ran).toEqual([]);
    expect(result.failure?.type).toBe('InvalidToolInputError');
    expect(result.failure?.message).toMatch(
      /^Invalid input for tool post: AI_TypeValidationError: Type validation failed/,
    );
    expect(attempts).toEqual([1]);
    expect(result.effects).toEqual([]);
  });

  it("effectToolCalls from a user workflow: execute gets the schema's parsed input, defaults applied, as the AI SDK hands it", async () => {
    const store = new MemoryEffectStore();
    const taskQueue = `q-${randomUUID()}`;
    const ran: unknown[] = [];
    const schema = z.object({ body: z.string().trim(), visibility: z.enum(['public', 'team']).default('team') });
    const agent = poster([], postTool(schema, ran));
    const result = await withWorker(taskQueue, [{ agent }], store, () =>
      env.client.workflow.execute<typeof directEffectCallWorkflow>('directEffectCallWorkflow', {
        taskQueue,
        workflowId: `direct-${randomUUID()}`,
        args: [{ agent: 'poster', toolName: 'post', toolInput: { body: '  hello  ' } }],
      }),
    );
    expect(result.failure).toBeUndefined();
    expect(ran).toEqual([{ body: 'hello', visibility: 'team' }]);
    expect(result.effects).toEqual([expect.objectContaining({ toolName: 'post', outcome: 'executed' })]);
  });
});
