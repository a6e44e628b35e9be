import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { InvalidToolInputError as AiInvalidToolInputError, tool } from 'ai';
import { z } from 'zod';
import { defineAgent, defineEffectTool, type IEffectStore } from '../../src/index.js';
import { loadConversation } from '../../src/conversation/load-conversation.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ClaimRequest, ClaimResult } from '../../src/stores/effect-store.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { FAILURE_CATALOGUE, type FailurePolicy } from '../../src/errors/failure-policy.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker, type AgentEntry } from '../../worker/index.js';
import { agentProgressQuery } from '../../common/agent-progress.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import type { AgentRunOutput } from '../../workflows/agent-loop.js';
import { OWNER, REPO, commentsOn, createResponder, openIssue } from '../fixtures/responder.js';
import { activityTypes } from '../fixtures/history.js';
import type { patientAgentWorkflow } from '../fixtures/workflows.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;
let bundle: WorkflowBundle;
let dir: string;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  github = await new LocalGitHubServer().start();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-ts-'));
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await github?.stop();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

async function withWorker<T>(
  agents: AgentEntry[],
  run: (taskQueue: string) => Promise<T>,
  store: IEffectStore = new MemoryEffectStore(),
): Promise<T> {
  lastStore = store;
  const taskQueue = `q-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents,
    store,
    workerOptions: { workflowBundle: bundle },
  });
  return worker.runUntil(run(taskQueue));
}

let lastStore: IEffectStore = new MemoryEffectStore();

/** A run's messages, read from the store of the worker that ran it (the last `withWorker`'s). */
async function messagesOfRun(result: AgentRunOutput): Promise<Array<{ role: string; content: unknown }>> {
  return loadConversation(lastStore as MemoryEffectStore, result);
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('waitFor: condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const answer = (issue: number, body = 'Thanks for the report!') => ({
  toolCalls: [{ toolName: 'comment', input: { issue, body } }],
});

describe('agent workflow on the time-skipping server', () => {
  it('a responder answers an issue with one comment and reports it executed', async () => {
    const issue = openIssue(github);
    const agent = createResponder({ githubUrl: github.url, model: scriptedModel([answer(issue), { text: 'Done.' }]) });
    const result = await withWorker([agent], async (taskQueue) => {
      const handle = await startAgentRun(env.client, {
        agent: 'responder',
        prompt: `Answer issue ${issue}`,
        taskQueue,
      });
      return handle.result();
    });
    expect(commentsOn(github, issue)).toBe(1);
    expect(result.text).toBe('Done.');
    expect(result.effects).toEqual([
      expect.objectContaining({
        toolName: 'comment',
        outcome: 'executed',
        attempts: 1,
        key: `${result.runId}:comment:${issue}`,
      }),
    ]);
    expect(result.steps).toHaveLength(2);
  });

  it('a crash after the comment is posted leaves exactly one comment: the retry reconciles through alreadyApplied', async () => {
    const issue = openIssue(github);
    let crashes = 0;
    const agent = createResponder({
      githubUrl: github.url,
      model: scriptedModel([answer(issue), { text: 'Done.' }]),
      afterComment: () => {
        if (crashes++ === 0) throw new Error('worker lost after posting the comment');
      },
    });
    const result = await withWorker(
      [{ agent, tools: { comment: { retry: { initialInterval: '10 ms' } } } }],
      async (taskQueue) => {
        const handle = await startAgentRun(env.client, {
          agent: 'responder',
          prompt: `Answer issue ${issue}`,
          taskQueue,
        });
        return handle.result();
      },
    );
    expect(crashes).toBe(1);
    expect(commentsOn(github, issue)).toBe(1);
    expect(result.effects).toEqual([expect.objectContaining({ outcome: 'reconciled', attempts: 2 })]);
  });

  it('a step-keyed tool sees the same messages in execute as its key was computed from, so a crash still reconciles', async () => {
    const issue = openIssue(github);
    let crashes = 0;
    const agent = createResponder({
      githubUrl: github.url,
      keyByStep: true,
      model: scriptedModel([answer(issue), { text: 'Done.' }]),
      afterComment: () => {
        if (crashes++ === 0) throw new Error('worker lost after posting the comment');
      },
    });
    const result = await withWorker(
      [{ agent, tools: { comment: { retry: { initialInterval: '10 ms' } } } }],
      async (taskQueue) => (await startAgentRun(env.client, { agent: 'responder', prompt: 'go', taskQueue })).result(),
    );
    expect(commentsOn(github, issue)).toBe(1);
    expect(result.effects).toEqual([
      expect.objectContaining({ key: `${result.runId}:comment:${issue}:0`, outcome: 'reconciled' }),
    ]);
  });

  it('two identical tool calls in one step apply once, in one activity', async () => {
    const issue = openIssue(github);
    const call = { toolName: 'comment', input: { issue, body: 'Same words' } };
    const agent = createResponder({
      githubUrl: github.url,
      model: scriptedModel([{ toolCalls: [call, call] }, { text: 'Done.' }]),
    });
    const { result, types } = await withWorker([agent], async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: 'go', taskQueue });
      return { result: await handle.result(), types: await activityTypes(handle) };
    });
    expect(commentsOn(github, issue)).toBe(1);
    expect(types.filter((t) => t === 'chamvi.effectCall')).toHaveLength(1);
    expect(result.effects.map((e) => e.outcome).sort()).toEqual(['executed', 'recorded']);
  });

  it('a tool refused by allow fails fast, without retries and without touching the remote', async () => {
    const issue = openIssue(github);
    const agent = createResponder({
      githubUrl: github.url,
      model: scriptedModel([answer(issue), { text: 'Could not comment.' }]),
    });
    const before = github.requests;
    const { result, types } = await withWorker([{ agent, allow: (name) => name !== 'comment' }], async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: 'go', taskQueue });
      return { result: await handle.result(), types: await activityTypes(handle) };
    });
    expect(github.requests).toBe(before);
    expect(commentsOn(github, issue)).toBe(0);
    expect(types.filter((t) => t === 'chamvi.effectCall')).toHaveLength(1);
    // The report lists the refused call as failed after its one attempt.
    expect(result.effects).toEqual([
      expect.objectContaining({
        toolName: 'comment',
        outcome: 'failed',
        attempts: 1,
        error: expect.objectContaining({ type: 'ToolNotAllowedError' }),
      }),
    ]);
    const toolMessage = (await messagesOfRun(result)).find((m) => m.role === 'tool');
    expect(JSON.stringify(toolMessage)).toContain('ToolNotAllowedError');
  });

  it('long waits between steps complete at once under time skipping', async () => {
    const issue = openIssue(github);
    const agent = createResponder({ githubUrl: github.url, model: scriptedModel([answer(issue), { text: 'Done.' }]) });
    const started = Date.now();
    const result = await withWorker([agent], async (taskQueue) =>
      env.client.workflow.execute<typeof patientAgentWorkflow>('patientAgentWorkflow', {
        taskQueue,
        workflowId: `patient-${randomUUID()}`,
        args: [{ agent: 'responder', prompt: 'go', waitBetweenSteps: '3 days' }],
      }),
    );
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result.waitedMs).toBeGreaterThanOrEqual(3 * 24 * 3600 * 1000);
    expect(commentsOn(github, issue)).toBe(1);
  });

  it('continue-as-new in the middle of a run keeps the run identity and repeats no effect', async () => {
    const first = openIssue(github);
    const second = openIssue(github);
    const agent = createResponder({
      githubUrl: github.url,
      model: scriptedModel([answer(first), answer(second), { text: 'Done.' }]),
    });
    const { result, runIds } = await withWorker([agent], async (taskQueue) => {
      const handle = await startAgentRun(env.client, {
        agent: 'responder',
        prompt: 'go',
        taskQueue,
        continueAsNewAfterSteps: 1,
      });
      const result = await handle.result();
      const firstRun = await env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).describe();
      const lastRun = await env.client.workflow.getHandle(handle.workflowId).describe();
      return { result, runIds: [firstRun.runId, lastRun.runId] };
    });
    expect(runIds[0]).not.toBe(runIds[1]);
    expect(result.runId).toBe(runIds[0]);
    expect(commentsOn(github, first)).toBe(1);
    expect(commentsOn(github, second)).toBe(1);
    expect(result.effects.map((e) => e.key)).toEqual([
      `${runIds[0]}:comment:${first}`,
      `${runIds[0]}:comment:${second}`,
    ]);
  });

  it('a step the model redoes with a different body keeps its step-keyed effect key: exactly one comment', async () => {
    const issue = openIssue(github);
    const model = scriptedModel([
      ({ attempt }) => answer(issue, `Draft number ${attempt}`),
      ({ attempt }) => {
        if (attempt === 1) throw new Error('model provider crashed mid-run');
        return { text: 'Done.' };
      },
    ]);
    const agent = createResponder({ githubUrl: github.url, model, keyByStep: true });
    const { result, firstRunId } = await withWorker([agent], async (taskQueue) => {
      const handle = await startAgentRun(env.client, {
        agent: 'responder',
        prompt: 'go',
        taskQueue,
        activityOptions: { modelStep: { retry: { maximumAttempts: 1 } } },
        retry: { maximumAttempts: 2, initialInterval: '10 ms' },
      });
      return { result: await handle.result(), firstRunId: handle.firstExecutionRunId };
    });
    expect(model.calls).toBe(4);
    expect(result.runId).toBe(firstRunId);
    expect(commentsOn(github, issue)).toBe(1);
    expect(github.tracker.listComments(OWNER, REPO, issue)?.[0]?.body).toContain('Draft number 1');
    expect(result.effects).toEqual([
      expect.objectContaining({ key: `${firstRunId}:comment:${issue}:0`, outcome: 'recorded' }),
    ]);
  });

  it('cancelling a run aborts ctx.run.signal inside the running tool', async () => {
    let aborted: unknown;
    const slow = defineEffectTool({
      description: 'Waits until cancelled.',
      inputSchema: z.object({}),
      execute: async (_input, { context }) =>
        new Promise((resolve) =>
          context.run.signal.addEventListener('abort', () => resolve((aborted = context.run.signal.reason))),
        ),
    });
    const agent = defineAgent({
      name: 'waiter',
      model: scriptedModel([{ toolCalls: [{ toolName: 'slow', input: {} }] }]),
      tools: { slow },
    });
    const failure = await withWorker(
      [{ agent, tools: { slow: { heartbeatTimeout: '1 second' } } }],
      async (taskQueue) => {
        const handle = await startAgentRun(env.client, { agent: 'waiter', prompt: 'go', taskQueue });
        await waitFor(async () => (await activityTypes(handle)).includes('chamvi.effectCall'));
        await handle.cancel();
        return handle.result().then(
          () => undefined,
          (error: unknown) => error,
        );
      },
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(aborted).toBeDefined();
  });

  // Two workers on one SQLite file, each with its own store instance (no in-process sharing
  // between them). Worker A has one activity slot, held by the zombie, so the retry runs on B.
  // The zombie asked the remote before it stalled (nothing there yet) and posts only once the
  // retry had its chance to post too: refused by the claim well past the zombie's lease, or
  // inside execute itself. Only the claim, held while execute runs even after the attempt's
  // deadline, keeps the retry from posting beside it; alreadyApplied cannot see a comment that
  // has not landed yet.
  it('a zombie still inside execute after its start-to-close timeout keeps its claim past its lease: the retry on another worker waits for its record, exactly one comment', async () => {
    const issue = openIssue(github);
    const LEASE_MS = 1_000; // the start-to-close timeout: the shorter of it and the heartbeat timeout
    const dbPath = join(dir, `zombie-${randomUUID()}.db`);
    let zombieDeadline = Infinity;
    const zombieInside = deferred();
    const retryRefusedPastLease = deferred();
    const retryExecuting = deferred();
    const zombiePosted = deferred();
    /** Worker B's store: tells when B was refused the key after the zombie's lease would have run out unrenewed. */
    class WatchedStore extends SqliteEffectStore {
      override async claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
        const answer = await super.claim(key, request);
        if (answer.status === 'busy' && performance.now() >= zombieDeadline + LEASE_MS + 250) {
          retryRefusedPastLease.resolve();
        }
        return answer;
      }
    }
    const agent = createResponder({
      githubUrl: github.url,
      model: scriptedModel([answer(issue), { text: 'Done.' }]),
      beforeComment: async () => {
        if (Context.current().info.attempt > 1) return retryExecuting.resolve();
        // Its signal aborts at the deadline (created just before execute); the zombie ignores it.
        zombieDeadline = performance.now() + LEASE_MS;
        zombieInside.resolve();
        await Promise.race([retryRefusedPastLease.promise, retryExecuting.promise, sleep(20_000)]);
      },
      afterComment: () => {
        if (Context.current().info.attempt === 1) zombiePosted.resolve();
      },
    });
    const stores = [new SqliteEffectStore(dbPath), new WatchedStore(dbPath)];
    const taskQueue = `q-${randomUUID()}`;
    const worker = (i: number) =>
      createAgentWorker({
        connection: env.nativeConnection,
        taskQueue,
        agents: [
          { agent, tools: { comment: { startToCloseTimeout: LEASE_MS, retry: { initialInterval: '100 ms' } } } },
        ],
        store: stores[i]!,
        workerOptions: {
          workflowBundle: bundle,
          ...(i === 0 ? { maxConcurrentActivityTaskExecutions: 1 } : {}),
          // Two workers of one task queue in one process need distinct versions; versioning stays off.
          workerDeploymentOptions: {
            version: { deploymentName: `zombie-${taskQueue}`, buildId: `worker-${i}` },
            useWorkerVersioning: false,
          },
        },
      });
    const [a, b] = await Promise.all([worker(0), worker(1)]);
    try {
      const result = await a.runUntil(async () => {
        const handle = await startAgentRun(env.client, { agent: 'responder', prompt: 'go', taskQueue });
        await zombieInside.promise;
        return b.runUntil(handle.result());
      });
      await zombiePosted.promise;
      expect(commentsOn(github, issue)).toBe(1);
      expect(result.effects).toEqual([expect.objectContaining({ toolName: 'comment', outcome: 'recorded' })]);
      expect(result.effects[0]?.attempts).toBeGreaterThan(1);
      // The record is the zombie's: it applied the effect, and the retry took its result.
      expect(await stores[0]!.get(result.effects[0]?.key ?? '')).toMatchObject({ origin: 'executed', attempt: 1 });
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  }, 60_000);

  // Every failure type of the catalogue that is not retried, thrown by the tool's own error class
  // of that name (Temporal takes the failure type from the constructor's name). It is not one of
  // this library's errors, so nothing marks it non-retryable but the catalogue's type list
  // (NON_RETRYABLE_TYPES, src/errors/failure-policy.ts), and the workflow's handling follows its entry.
  it.each(
    Object.entries(FAILURE_CATALOGUE as Record<string, FailurePolicy>)
      .filter(([, policy]) => policy.retried === false && policy.then !== 'caller')
      .map(([type, policy]) => [type, policy.then === 'model' ? 'answered' : 'fails the run'] as const),
  )(
    "a tool's own %s (not a library error) is never retried, by the non-retryable type list: the effect call is attempted exactly once (%s)",
    async (type: string, then: 'answered' | 'fails the run') => {
      const ToolError = { [type]: class extends Error {} }[type]!;
      let attempts = 0;
      const refuse = defineEffectTool({
        description: 'Files a change the remote may refuse.',
        inputSchema: z.object({ change: z.string() }),
        execute: async (): Promise<{ filed: boolean }> => {
          attempts++;
          throw new ToolError('the tracker refused the change');
        },
      });
      const agent = defineAgent({
        name: 'refused',
        model: scriptedModel([
          { toolCalls: [{ toolName: 'refuse', input: { change: 'c' } }] },
          { text: 'Could not file it.' },
        ]),
        tools: { refuse },
      });
      const outcome = await withWorker(
        [{ agent, tools: { refuse: { retry: { initialInterval: '10 ms', maximumAttempts: 3 } } } }],
        async (taskQueue) => {
          const handle = await startAgentRun(env.client, { agent: 'refused', prompt: 'go', taskQueue });
          return handle.result().then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
        },
      );
      expect(attempts).toBe(1);
      if (then === 'answered') {
        expect('result' in outcome).toBe(true);
        const told =
          'result' in outcome
            ? JSON.stringify((await messagesOfRun(outcome.result)).find((m) => m.role === 'tool'))
            : '';
        expect(told).toContain(`${type}: the tracker refused the change`);
      } else {
        expect('error' in outcome && outcome.error).toBeInstanceOf(WorkflowFailedError);
        const failure = 'error' in outcome ? (outcome.error as WorkflowFailedError).cause : undefined;
        expect(JSON.stringify(failure?.message)).toContain('the tracker refused the change');
      }
    },
  );

  it("the AI SDK's own InvalidToolInputError thrown by a tool has the catalogue's policy of that name: attempted once, told to the model", async () => {
    let attempts = 0;
    const check = defineEffectTool({
      description: 'Files a change on a branch that may not exist.',
      inputSchema: z.object({ branch: z.string() }),
      execute: async ({ branch }): Promise<{ filed: boolean }> => {
        attempts++;
        throw new AiInvalidToolInputError({
          toolName: 'check',
          toolInput: JSON.stringify({ branch }),
          cause: new Error(`branch ${branch} does not exist`),
        });
      },
    });
    const agent = defineAgent({
      name: 'checked',
      model: scriptedModel([{ toolCalls: [{ toolName: 'check', input: { branch: 'gone' } }] }, { text: 'No branch.' }]),
      tools: { check },
    });
    const result = await withWorker(
      [{ agent, tools: { check: { retry: { initialInterval: '10 ms', maximumAttempts: 3 } } } }],
      async (taskQueue) => (await startAgentRun(env.client, { agent: 'checked', prompt: 'go', taskQueue })).result(),
    );
    expect(attempts).toBe(1);
    const told = JSON.stringify((await messagesOfRun(result)).find((m) => m.role === 'tool'));
    expect(told).toContain('InvalidToolInputError: Invalid input for tool check:');
    expect(told).toContain('branch gone does not exist');
  });

  it('schema-invalid tool input and unknown tool names go back to the model without an activity or a retry', async () => {
    const issue = openIssue(github);
    const agent = createResponder({
      githubUrl: github.url,
      model: scriptedModel([
        {
          toolCalls: [
            { toolName: 'comment', input: { issue: 'not a number' } },
            { toolName: 'delete_repo', input: {} },
          ],
        },
        { text: 'I could not do that.' },
      ]),
    });
    const { result, types } = await withWorker([agent], async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: 'go', taskQueue });
      return { result: await handle.result(), types: await activityTypes(handle) };
    });
    expect(types).toEqual(['chamvi.modelStep', 'chamvi.modelStep']);
    expect(commentsOn(github, issue)).toBe(0);
    const toolMessage = JSON.stringify((await messagesOfRun(result)).find((m) => m.role === 'tool'));
    expect(toolMessage).toContain('Invalid input for tool comment');
    expect(toolMessage).toContain("Model tried to call unavailable tool 'delete_repo'");
    expect(result.text).toBe('I could not do that.');
  });

  it('the progress query reports the current step and the effects so far while the run waits on a tool', async () => {
    const issue = openIssue(github);
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const responder = createResponder({ githubUrl: github.url, model: scriptedModel([]) });
    const gate = tool({
      description: 'Waits for a human.',
      inputSchema: z.object({}),
      execute: async () => released.then(() => 'ok'),
    });
    const agent = defineAgent({
      name: 'gated',
      model: scriptedModel([answer(issue), { toolCalls: [{ toolName: 'gate', input: {} }] }, { text: 'Done.' }]),
      tools: { comment: responder.tools['comment']!, gate },
    });
    const { during, after } = await withWorker([agent], async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'gated', prompt: 'go', taskQueue });
      await waitFor(async () => (await activityTypes(handle)).includes('chamvi.toolCall'));
      const during = await handle.query(agentProgressQuery);
      release();
      await handle.result();
      return { during, after: await handle.query(agentProgressQuery) };
    });
    expect(during).toEqual(expect.objectContaining({ agent: 'gated', step: 1, status: 'running' }));
    expect(during.effects).toEqual([expect.objectContaining({ toolName: 'comment', outcome: 'executed' })]);
    expect(after.status).toBe('completed');
  });

  it('an unknown agent name fails the run at once with a message naming the registered agents', async () => {
    const agent = createResponder({ githubUrl: github.url, model: scriptedModel([]) });
    const failure = await withWorker([agent], async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'nobody', prompt: 'go', taskQueue });
      return handle.result().then(
        () => undefined,
        (error: unknown) => error,
      );
    });
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause?.cause as ApplicationFailure | undefined;
    expect(cause?.type).toBe('UnknownAgentError');
    expect(cause?.nonRetryable).toBe(true);
    expect(cause?.message).toContain('No agent named "nobody" is registered on this worker (registered: responder)');
  });
});
