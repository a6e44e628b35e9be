// Run-wide budgets on the time-skipping test server: the usage of every model step of a run and of
// its sub-agent runs, counted once, against tokens, cost or steps; a run that would pass the budget
// stops with a result, or waits for a budget approval decided at the top run.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { tool } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent, defineAgentTool, type Agent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel, type ScriptEntry } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { agentProgressQuery } from '../../common/agent-progress.js';
import { startAgentRun, type StartAgentRunOptions } from '../../client/start-agent-run.js';
import { decideApproval, listPendingApprovals } from '../../client/approvals-client.js';
import { budgetRequestSignal } from '../../workflows/run-budget.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import { NoteBoard, noteTool } from '../fixtures/compensating-tools.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

const SECRET = 'budget-approval-secret-of-32-bytes!!';

type Prompt = LanguageModelV4CallOptions['prompt'];

function userText(prompt: Prompt): string {
  const user = prompt.find((m) => m.role === 'user');
  if (user === undefined || typeof user.content === 'string') return '';
  return user.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

const usage = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens } });

/** The researcher: step 0 posts a note of its task (3 + 2 tokens), step 1 answers `Found: <task>` (4 + 1). */
function researcher(board: NoteBoard): Agent {
  return defineAgent({
    name: 'researcher',
    model: scriptedModel([
      ({ prompt }) => ({ toolCalls: [{ toolName: 'note', input: { text: userText(prompt) } }], ...usage(3, 2) }),
      ({ prompt }) => ({ text: `Found: ${userText(prompt)}`, ...usage(4, 1) }),
    ]),
    tools: { note: noteTool(board) },
  });
}

/** The lead: step 0 calls the researcher (100 + 50 tokens), step 1 answers with what it got (20 + 5). */
function lead(board: NoteBoard, script?: ScriptEntry[]): Agent {
  return defineAgent({
    name: 'lead',
    model: scriptedModel(
      script ?? [
        { toolCalls: [{ toolName: 'research', input: { prompt: 'tides' } }], ...usage(100, 50) },
        { text: 'done', ...usage(20, 5) },
      ],
    ),
    tools: {
      research: defineAgentTool(researcher(board)),
      note: noteTool(board),
      ask: tool({ inputSchema: z.object({ what: z.string() }), needsApproval: true, execute: ({ what }) => what }),
    },
  });
}

async function withRun<T>(
  agent: Agent,
  run: Omit<StartAgentRunOptions, 'agent' | 'taskQueue' | 'prompt'>,
  body: (handle: Awaited<ReturnType<typeof startAgentRun>>) => Promise<T>,
): Promise<T> {
  const taskQueue = `q-${randomUUID()}`;
  const workflowId = `budget-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [agent],
    store: new MemoryEffectStore(),
    approvalSecret: SECRET,
    workerOptions: { workflowBundle: bundle },
  });
  return worker.runUntil(async () =>
    body(await startAgentRun(env.client, { agent: agent.name, prompt: 'Lead.', taskQueue, workflowId, ...run })),
  );
}

/** Polls `read` until `done` says so (10 s at most), and answers the last value read. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 200 && !done(value); i++) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}

const notes = (board: NoteBoard) => [...board.notes.values()].map((n) => n.text);

describe('usage and budgets of a run and its sub-agent runs (time-skipping)', () => {
  it('a run reports the usage of its own steps and of each sub-agent run, each step counted once', async () => {
    const board = new NoteBoard();
    await withRun(lead(board), {}, async (handle) => {
      const output = await handle.result();
      expect(output.children?.[0]?.usage).toEqual({ steps: 2, inputTokens: 7, outputTokens: 3 });
      expect(output.usage).toEqual({ steps: 4, inputTokens: 127, outputTokens: 58 });
      expect((await handle.query(agentProgressQuery)).usage).toEqual(output.usage);
      expect(output.budgetExhausted).toBeUndefined();
    });
  });

  it('a step budget stops the run before the step past it: the run completes with its result and says why', async () => {
    const board = new NoteBoard();
    const agent = lead(board, [
      { toolCalls: [{ toolName: 'note', input: { text: 'one' } }] },
      { toolCalls: [{ toolName: 'note', input: { text: 'two' } }] },
      { text: 'never' },
    ]);
    await withRun(agent, { budget: { steps: 2 } }, async (handle) => {
      const output = await handle.result();
      expect(notes(board)).toEqual(['one', 'two']);
      expect(output.steps).toHaveLength(2);
      expect(output.budgetExhausted).toEqual({
        limit: 'steps',
        budget: { steps: 2 },
        used: { steps: 2, inputTokens: 20, outputTokens: 20 },
      });
      // The last step's tool result, which no model saw, is in the output's conversation.
      expect(output.conversation.pending).toHaveLength(1);
    });
  });

  it("a token budget that runs out in a sub-agent stops the sub-agent's next step and then the parent's", async () => {
    const board = new NoteBoard();
    // The lead's step 0 (150 tokens) and the researcher's step 0 (5) reach 155 of 155.
    await withRun(lead(board), { budget: { tokens: 155 } }, async (handle) => {
      const output = await handle.result();
      expect(notes(board)).toEqual(['tides']);
      const child = output.children?.[0];
      expect(child).toMatchObject({
        status: 'completed',
        steps: 1,
        usage: { steps: 1, inputTokens: 3, outputTokens: 2 },
      });
      expect(child?.budgetExhausted?.limit).toBe('tokens');
      expect(output.steps).toHaveLength(1);
      expect(output.budgetExhausted).toMatchObject({
        limit: 'tokens',
        used: { steps: 2, inputTokens: 103, outputTokens: 52 },
      });
    });
  });

  it('a budget that runs out in a sub-agent is raised by a budget approval at the top run, and the sub-agent goes on', async () => {
    const board = new NoteBoard();
    const budget = { steps: 2, onExhausted: 'ask', raise: { steps: 5 } } as const;
    await withRun(lead(board), { budget }, async (handle) => {
      const pending = await until(
        () => listPendingApprovals(env.client, handle.workflowId),
        (list) => list.length > 0,
      );
      expect(pending).toEqual([
        expect.objectContaining({
          toolName: 'chamvi.budget',
          toolCallId: 'budget-0',
          input: expect.objectContaining({ limit: 'steps', add: { steps: 5 } }),
        }),
      ]);
      // The budget's approval is the top run's own, whichever run of the tree asked.
      expect(pending[0]?.workflowId).toBeUndefined();
      const record = await decideApproval(env.client, handle.workflowId, {
        toolCallId: 'budget-0',
        approved: true,
        approver: 'ada',
        secret: SECRET,
      });
      expect(record).toMatchObject({ toolName: 'chamvi.budget', approved: true, approver: 'ada' });
      const output = await handle.result();
      expect(output.children?.[0]?.budgetExhausted).toBeUndefined();
      expect(output.budgetExhausted).toBeUndefined();
      expect(output.text).toBe('done');
      expect(output.usage.steps).toBe(4);
      expect(output.approvals).toEqual([expect.objectContaining({ toolName: 'chamvi.budget', approved: true })]);
      expect((await handle.query(agentProgressQuery)).budget).toEqual({ limits: { steps: 7 }, used: output.usage });
    });
  });

  it("a sub-agent run cancelled on its own still counts its steps in the top run's budget", async () => {
    const board = new NoteBoard();
    const waiting = defineAgent({
      name: 'researcher',
      model: scriptedModel([{ toolCalls: [{ toolName: 'ask', input: { what: 'go' } }] }, { text: 'never' }]),
      tools: {
        ask: tool({ inputSchema: z.object({ what: z.string() }), needsApproval: true, execute: ({ what }) => what }),
      },
    });
    const agent = defineAgent({
      name: 'lead',
      model: scriptedModel([{ toolCalls: [{ toolName: 'research', input: { prompt: 'tides' } }] }, { text: 'done' }]),
      tools: { research: defineAgentTool(waiting) },
    });
    await withRun(agent, { budget: { steps: 10 } }, async (handle) => {
      const pending = await until(
        () => listPendingApprovals(env.client, handle.workflowId),
        (list) => list.length > 0,
      );
      // The sub-agent's step 0 has run; it has asked for no step since, so only its last count carries it.
      await env.client.workflow.getHandle(pending[0]?.workflowId ?? '').cancel();
      const output = await handle.result();
      expect(output.children?.[0]?.status).toBe('failed');
      // The run's own report has no count of the failed child; the budget's has.
      expect(output.usage.steps).toBe(2);
      expect((await handle.query(agentProgressQuery)).budget?.used.steps).toBe(3);
      expect(board.notes.size).toBe(0);
    });
  });

  it('a budget approval nobody decides stops the run at its timeout', async () => {
    const board = new NoteBoard();
    const budget = { steps: 1, onExhausted: 'ask', askTimeout: '2 hours' } as const;
    await withRun(lead(board), { budget }, async (handle) => {
      const output = await handle.result();
      expect(output.approvals).toEqual([
        expect.objectContaining({ toolName: 'chamvi.budget', approved: false, decidedBy: 'timeout' }),
      ]);
      // The researcher asked first, and was stopped; the lead was stopped by the same decision, without asking again.
      expect(output.children?.[0]).toMatchObject({ steps: 0, budgetExhausted: { limit: 'steps' } });
      expect(output.budgetExhausted?.limit).toBe('steps');
      expect(board.notes.size).toBe(0);
    });
  });

  it("the count goes on across continue-as-new: the run stops at the budget's step, not that many steps after it", async () => {
    const board = new NoteBoard();
    const step = (text: string) => ({ toolCalls: [{ toolName: 'note', input: { text } }] });
    const agent = lead(board, [step('a'), step('b'), step('c'), step('d'), { text: 'never' }]);
    await withRun(agent, { budget: { steps: 3 }, continueAsNewAfterSteps: 1 }, async (handle) => {
      const output = await handle.result();
      expect(notes(board)).toEqual(['a', 'b', 'c']);
      expect(output.usage.steps).toBe(3);
      expect(output.budgetExhausted?.limit).toBe('steps');
    });
  });

  it("a cost budget prices each step by the answering model's price, and a model without a price fails the run naming it", async () => {
    const board = new NoteBoard();
    const agent = lead(board, [
      { toolCalls: [{ toolName: 'note', input: { text: 'one' } }], ...usage(1_000_000, 0) },
      { text: 'never' },
    ]);
    const prices = { scripted: { inputPerMillionTokens: 2, outputPerMillionTokens: 8 } };
    await withRun(agent, { budget: { costUsd: 2, prices } }, async (handle) => {
      const output = await handle.result();
      expect(output.usage).toEqual({ steps: 1, inputTokens: 1_000_000, outputTokens: 0, costUsd: 2 });
      expect(output.budgetExhausted?.limit).toBe('costUsd');
    });
    const other = { gpt: { inputPerMillionTokens: 2, outputPerMillionTokens: 8 } };
    await withRun(agent, { budget: { costUsd: 2, prices: other } }, async (handle) => {
      const failure = await handle.result().catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect(String((failure as WorkflowFailedError).cause?.message)).toContain(
        'has no price for model "scripted", which answered a step: add "scripted" to budget.prices',
      );
    });
  });

  it('a budget that cannot be used fails the run before its first step, naming each problem', async () => {
    const board = new NoteBoard();
    const budget = { tokens: -1, onExhausted: 'later', costUsd: 1 } as never;
    await withRun(lead(board), { budget }, async (handle) => {
      const failure = (await handle.result().catch((e: unknown) => e)) as WorkflowFailedError;
      expect(failure.cause?.message).toBe(
        "The run's budget cannot be used: budget.tokens must be a positive number (got -1); budget.onExhausted must be 'stop' or 'ask' (got \"later\"); budget.costUsd needs budget.prices: the price per million tokens of each model the run uses.",
      );
      expect(board.notes.size).toBe(0);
    });
  });

  it("a budget request from outside the run's tree, or with a malformed count, is not counted", async () => {
    const board = new NoteBoard();
    const agent = lead(board, [{ toolCalls: [{ toolName: 'ask', input: { what: 'go' } }] }, { text: 'done' }]);
    await withRun(agent, { budget: { steps: 5 } }, async (handle) => {
      await until(
        () => listPendingApprovals(env.client, handle.workflowId),
        (list) => list.length > 0,
      );
      const huge = { steps: 1000, inputTokens: 0, outputTokens: 0 };
      await handle.signal(budgetRequestSignal, { workflowId: 'someone-else', step: 0, usage: huge, final: true });
      await handle.signal(budgetRequestSignal, {
        workflowId: `${handle.workflowId}:x`,
        step: 0,
        usage: { ...huge, inputTokens: -5 },
        final: true,
      });
      const progress = await handle.query(agentProgressQuery);
      expect(progress.budget).toEqual({ limits: { steps: 5 }, used: { steps: 1, inputTokens: 10, outputTokens: 10 } });
      await decideApproval(env.client, handle.workflowId, { toolCallId: 'call-0-0', approved: true, secret: SECRET });
      const output = await handle.result();
      expect(output.text).toBe('done');
      expect(output.budgetExhausted).toBeUndefined();
    });
  });
});
