// Sub-agents (agent tools) on the time-skipping test server: each call a child workflow whose ids
// derive from the parent's run and the call, its effects once per key, its end a tool result for
// the parent's model, its report in the parent's output and progress.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { tool } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent, defineAgentTool, inputFingerprint, type Agent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel, type ScriptEntry } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { agentProgressQuery } from '../../common/agent-progress.js';
import { startAgentRun, type StartAgentRunOptions } from '../../client/start-agent-run.js';
import { ApprovalAmbiguousError, decideApproval, listPendingApprovals } from '../../client/approvals-client.js';
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

type Prompt = LanguageModelV4CallOptions['prompt'];

/** The text of the prompt's first user message. */
function userText(prompt: Prompt): string {
  const user = prompt.find((m) => m.role === 'user');
  if (user === undefined || typeof user.content === 'string') return '';
  return user.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** Every tool result the prompt carries, as `<tool>: <output>` (text or error text). */
function toolResults(prompt: Prompt): string[] {
  const found: string[] = [];
  for (const m of prompt) {
    if (m.role !== 'tool') continue;
    for (const part of m.content) {
      if (part.type !== 'tool-result') continue;
      const output = part.output as { type: string; value?: unknown };
      found.push(`${part.toolName}: ${output.type}: ${String(output.value)}`);
    }
  }
  return found;
}

/** The researcher: posts one note of its task, then answers `Found: <task>`. */
function researcher(board: NoteBoard, script?: ScriptEntry[]): Agent {
  return defineAgent({
    name: 'researcher',
    model: scriptedModel(
      script ?? [
        ({ prompt }) => ({ toolCalls: [{ toolName: 'note', input: { text: userText(prompt) } }] }),
        ({ prompt }) => ({ text: `Found: ${userText(prompt)}` }),
      ],
    ),
    tools: { note: noteTool(board) },
  });
}

/** The lead: its step 0 is `first`, then it answers with the tool results it got. */
function lead(sub: Agent, first: ScriptEntry, extra: Record<string, unknown> = {}): Agent {
  return defineAgent({
    name: 'lead',
    model: scriptedModel([first, ({ prompt }) => ({ text: toolResults(prompt).join('\n') })]),
    tools: { research: defineAgentTool(sub), ...extra },
  });
}

const research = (prompt: string, toolCallId?: string) => ({
  toolName: 'research',
  input: { prompt },
  ...(toolCallId !== undefined ? { toolCallId } : {}),
});

const failFast = { modelStep: { retry: { maximumAttempts: 1 } } } as const;

async function withLead<T>(
  agent: Agent,
  run: Omit<StartAgentRunOptions, 'agent' | 'taskQueue' | 'prompt'>,
  body: (start: () => ReturnType<typeof startAgentRun>, workflowId: string) => Promise<T>,
): Promise<T> {
  const taskQueue = `q-${randomUUID()}`;
  const workflowId = `lead-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    // The sub-agent is registered with the agent that uses it.
    agents: [agent],
    store: new MemoryEffectStore(),
    approvalSecret: SECRET,
    workerOptions: { workflowBundle: bundle },
  });
  const start = () => startAgentRun(env.client, { agent: 'lead', prompt: 'Lead.', taskQueue, workflowId, ...run });
  return worker.runUntil(body(start, workflowId));
}

const SECRET = 'sub-agent-approval-secret-of-32-bytes';

/** Polls `read` until `done` says so (10 s at most), and answers the last value read. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 200 && !done(value); i++) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}

/** An agent whose step 0 makes `calls` (`ask` needs approval), then answers with its tool results. */
function asking(
  name: string,
  calls: Array<{ toolName: string; input: unknown; toolCallId?: string }>,
  tools: Record<string, unknown>,
): Agent {
  return defineAgent({
    name,
    model: scriptedModel([{ toolCalls: calls }, ({ prompt }) => ({ text: toolResults(prompt).join('\n') })]),
    tools: {
      ask: tool({
        inputSchema: z.object({ what: z.string() }),
        needsApproval: true,
        execute: ({ what }) => `asked ${what}`,
      }),
      ...tools,
    } as never,
  });
}

const fp = (prompt: string) => inputFingerprint({ prompt }).slice(0, 16);

describe('a sub-agent call is a child workflow', () => {
  it("runs with ids derived from the parent's run and the call, applies its effect once and answers the parent's model with its text", async () => {
    const board = new NoteBoard();
    await withLead(lead(researcher(board), { toolCalls: [research('tides')] }), {}, async (start, workflowId) => {
      const handle = await start();
      const output = await handle.result();
      const id = `research:0:${fp('tides')}`;
      expect(output.text).toBe('research: text: Found: tides');
      expect(board.log).toEqual(['post:tides']);
      expect(output.children).toEqual([
        {
          toolCallId: 'call-0-0',
          toolName: 'research',
          agent: 'researcher',
          step: 0,
          workflowId: `${workflowId}:${id}`,
          runId: `${output.runId}:${id}`,
          status: 'completed',
          steps: 2,
          effects: [expect.objectContaining({ toolName: 'note', outcome: 'executed' })],
          usage: { steps: 2, inputTokens: 20, outputTokens: 20 },
        },
      ]);
      // The child's default key starts with its derived run id: stable for the same call.
      expect(output.children?.[0]?.effects?.[0]?.key.startsWith(`${output.runId}:${id}:note:`)).toBe(true);
      const child = await env.client.workflow.getHandle(`${workflowId}:${id}`).describe();
      expect(child.status.name).toBe('COMPLETED');
      expect(child.type).toBe('agentWorkflow');
      expect(child.parentExecution?.workflowId).toBe(workflowId);
      // The parent's own report has no effect of the child's: those are the child's.
      expect(output.effects).toEqual([]);
      const progress = await handle.query(agentProgressQuery);
      expect(progress.children).toEqual(output.children);
    });
  });

  it('two calls of one step with the same input are one child; another input is another child', async () => {
    const board = new NoteBoard();
    const first = { toolCalls: [research('tides', 'a'), research('tides', 'b'), research('winds', 'c')] };
    await withLead(lead(researcher(board), first), {}, async (start) => {
      const output = await (await start()).result();
      expect(board.log.sort()).toEqual(['post:tides', 'post:winds']);
      expect(output.text.split('\n').sort()).toEqual([
        'research: text: Found: tides',
        'research: text: Found: tides',
        'research: text: Found: winds',
      ]);
      expect(
        output.children?.map((c) => [c.toolCallId, c.runId.endsWith(fp(c.toolCallId === 'c' ? 'winds' : 'tides'))]),
      ).toEqual(
        expect.arrayContaining([
          ['a', true],
          ['c', true],
        ]),
      );
      expect(output.children).toHaveLength(2);
    });
  });

  it("a child that fails is a tool error for the parent's model, and the parent goes on", async () => {
    const board = new NoteBoard();
    // The child's script has no step: its model step fails, so does the child.
    await withLead(
      lead(researcher(board, []), { toolCalls: [research('tides')] }),
      { activityOptions: failFast },
      async (start) => {
        const output = await (await start()).result();
        expect(output.text).toMatch(
          /^research: error-text: Sub-agent researcher \(tool research\) failed: .*the script has 0 step/,
        );
        expect(output.children).toEqual([
          expect.objectContaining({
            status: 'failed',
            error: expect.objectContaining({ message: expect.stringMatching(/script has 0 step/) }),
          }),
        ]);
        expect(board.log).toEqual([]);
      },
    );
  });

  it('a parent whose execution fails and is retried gets the same child for the same call: the note is posted once', async () => {
    const board = new NoteBoard();
    let failed = 0;
    const agent = defineAgent({
      name: 'lead',
      model: scriptedModel([
        { toolCalls: [research('tides')] },
        ({ prompt }) => {
          // The first execution fails after its child ended; the retried one finishes.
          if (failed++ === 0) throw new Error('the lead crashed after its sub-agent ended');
          return { text: toolResults(prompt).join('\n') };
        },
      ]),
      tools: { research: defineAgentTool(researcher(board)) },
    });
    await withLead(
      agent,
      { activityOptions: failFast, retry: { maximumAttempts: 2, initialInterval: '10 ms' } },
      async (start, workflowId) => {
        const output = await (await start()).result();
        expect(failed).toBe(2);
        expect(output.text).toBe('research: text: Found: tides');
        expect(board.log).toEqual(['post:tides']);
        // The retried execution's child reconciled nothing: the key was recorded, so it returned the record.
        expect(output.children?.[0]?.effects?.map((e) => e.outcome)).toEqual(['recorded']);
        expect(output.children?.[0]?.workflowId).toBe(`${workflowId}:research:0:${fp('tides')}`);
      },
    );
  });

  it('cancelling the parent cancels the running child, and waits for it to end', async () => {
    const board = new NoteBoard();
    // The child waits for an approval nobody gives; the parent waits for the child.
    const waiting = defineAgent({
      name: 'researcher',
      model: scriptedModel([{ toolCalls: [{ toolName: 'ask', input: {} }] }, { text: 'never' }]),
      tools: { ask: tool({ inputSchema: z.object({}), needsApproval: true, execute: () => 'asked' }) },
    });
    await withLead(lead(waiting, { toolCalls: [research('tides')] }), {}, async (start, workflowId) => {
      const handle = await start();
      const childId = `${workflowId}:research:0:${fp('tides')}`;
      let progress = await handle.query(agentProgressQuery);
      for (let i = 0; i < 200 && progress.children?.[0]?.status !== 'running'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        progress = await handle.query(agentProgressQuery);
      }
      expect(progress.children).toEqual([expect.objectContaining({ status: 'running', workflowId: childId })]);
      await handle.cancel();
      // Awaiting a result lets the test server skip time, which would time the approval out and let the child
      // complete; describing the child does not, so the cancellation is all that can end it.
      const child = env.client.workflow.getHandle(childId);
      let status = (await child.describe()).status.name;
      for (let i = 0; i < 200 && status === 'RUNNING'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await child.describe()).status.name;
      }
      expect(status).toBe('CANCELLED');
      const error = await handle.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect(board.log).toEqual([]);
    });
  });

  it('a sub-agent of a sub-agent is a grandchild: each level reports the one below it', async () => {
    const board = new NoteBoard();
    const archivist = defineAgent({
      name: 'archivist',
      model: scriptedModel([
        ({ prompt }) => ({ toolCalls: [{ toolName: 'note', input: { text: `archived ${userText(prompt)}` } }] }),
        { text: 'Archived.' },
      ]),
      tools: { note: noteTool(board) },
    });
    const middle = defineAgent({
      name: 'researcher',
      model: scriptedModel([
        { toolCalls: [{ toolName: 'archive', input: { prompt: 'tides' } }] },
        ({ prompt }) => ({ text: toolResults(prompt).join('\n') }),
      ]),
      tools: { archive: defineAgentTool(archivist) },
    });
    await withLead(lead(middle, { toolCalls: [research('tides')] }), {}, async (start, workflowId) => {
      const output = await (await start()).result();
      expect(output.text).toBe('research: text: archive: text: Archived.');
      expect(board.log).toEqual(['post:archived tides']);
      const child = output.children?.[0];
      const grandchild = child?.children?.[0];
      expect(child?.effects).toEqual([]);
      expect(grandchild).toMatchObject({
        agent: 'archivist',
        status: 'completed',
        workflowId: `${workflowId}:research:0:${fp('tides')}:archive:0:${fp('tides')}`,
        runId: `${output.runId}:research:0:${fp('tides')}:archive:0:${fp('tides')}`,
        effects: [expect.objectContaining({ toolName: 'note', outcome: 'executed' })],
      });
    });
  });

  it("a prompt(input) that returns no text refuses the call: the parent's model is told, no child starts", async () => {
    const board = new NoteBoard();
    const agent = defineAgent({
      name: 'lead',
      model: scriptedModel([
        { toolCalls: [{ toolName: 'research', input: { topic: '' } }] },
        ({ prompt }) => ({ text: toolResults(prompt).join('\n') }),
      ]),
      tools: {
        research: defineAgentTool(researcher(board), {
          inputSchema: z.object({ topic: z.string() }),
          prompt: ({ topic }) => topic,
        }),
      },
    });
    await withLead(agent, {}, async (start) => {
      const output = await (await start()).result();
      expect(output.text).toBe(
        'research: error-text: Agent tool "research": prompt(input) must return a non-empty string (got "").',
      );
      expect(output.children).toBeUndefined();
      expect(board.log).toEqual([]);
    });
  });
});

describe("a sub-agent's approvals surface at the top", () => {
  it("two levels down, a call waiting for approval is listed by the top run's pending approvals and decided there", async () => {
    const deepest = asking('archivist', [{ toolName: 'ask', input: { what: 'to archive' } }], {});
    const middle = asking(
      'researcher',
      [research('tides')].map((c) => ({ ...c, toolName: 'archive' })),
      {
        archive: defineAgentTool(deepest),
      },
    );
    await withLead(lead(middle, { toolCalls: [research('tides')] }), {}, async (start, workflowId) => {
      const handle = await start();
      const grandchild = `${workflowId}:research:0:${fp('tides')}:archive:0:${fp('tides')}`;
      const pending = await until(
        () => listPendingApprovals(env.client, workflowId),
        (p) => p.length > 0,
      );
      expect(pending).toEqual([
        expect.objectContaining({
          toolName: 'ask',
          agent: 'archivist',
          workflowId: grandchild,
          runId: `${(await handle.query(agentProgressQuery)).runId}:research:0:${fp('tides')}:archive:0:${fp('tides')}`,
        }),
      ]);
      // Decided at the top: the decision reaches the grandchild, bound to its run, call and input.
      const record = await decideApproval(env.client, workflowId, {
        toolCallId: pending[0]?.toolCallId ?? '',
        approved: true,
        approver: 'ada',
        secret: SECRET,
      });
      expect(record).toMatchObject({ approved: true, decidedBy: 'approver', approver: 'ada' });
      const output = await handle.result();
      expect(output.text).toBe('research: text: archive: text: ask: text: asked to archive');
      expect(output.children?.[0]?.children?.[0]?.approvals).toEqual([
        expect.objectContaining({ toolName: 'ask', approved: true, approver: 'ada' }),
      ]);
      expect(await listPendingApprovals(env.client, workflowId)).toEqual([]);
    });
  });

  it('a call id waiting both in the run and in its sub-agent run is refused as ambiguous until the decision names the run', async () => {
    // Each run numbers its calls on its own: here both asks are call-0-1.
    const child = asking('researcher', [{ toolName: 'ask', input: { what: 'child' }, toolCallId: 'call-0-1' }], {});
    const parent = asking('lead', [research('tides'), { toolName: 'ask', input: { what: 'parent' } }], {
      research: defineAgentTool(child),
    });
    await withLead(parent, {}, async (start, workflowId) => {
      const handle = await start();
      const childId = `${workflowId}:research:0:${fp('tides')}`;
      const pending = await until(
        () => listPendingApprovals(env.client, workflowId),
        (p) => p.length === 2,
      );
      expect(pending.map((p) => [p.toolCallId, p.workflowId, p.input])).toEqual([
        ['call-0-1', undefined, { what: 'parent' }],
        ['call-0-1', childId, { what: 'child' }],
      ]);
      expect(await listPendingApprovals(env.client, workflowId, { subAgents: false })).toHaveLength(1);
      const decide = (toolCallId: string, workflow?: string) =>
        decideApproval(env.client, workflowId, {
          toolCallId,
          approved: true,
          secret: SECRET,
          ...(workflow !== undefined ? { workflow } : {}),
        });
      const ambiguous = await decide('call-0-1').catch((e: unknown) => e);
      expect(ApprovalAmbiguousError.isInstance(ambiguous)).toBe(true);
      expect(String(ambiguous)).toContain(`(${workflowId}, ${childId}); nothing was sent. Pass workflow`);
      await expect(decide('call-0-0', workflowId)).rejects.toThrow(/is not waiting for approval \(waiting: call-0-1\)/);
      expect(await decide('call-0-1', childId)).toMatchObject({ approved: true });
      expect(await decide('call-0-1', workflowId)).toMatchObject({ approved: true });
      const output = await handle.result();
      expect(output.text.split('\n').sort()).toEqual([
        'ask: text: asked parent',
        'research: text: ask: text: asked child',
      ]);
    });
  });
});
