// Sub-agents in the top run's UI message stream, as the AI SDK shows subagents: a sub-agent's text
// as the preliminary output of the agent tool part that called it, and a call waiting for approval
// two levels down as a native approval request on that part, answered through chatRoute with
// useChat's own transport and predicate. On Temporal's time-skipping server with a real PostgreSQL
// stream store and streaming scripted models; effects counted where they are applied.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent, defineAgentTool, defineEffectTool, type Agent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { PostgresRunStreamStore } from '../../src/stream/postgres-run-stream.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { listPendingApprovals } from '../../client/approvals-client.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { chatRoute } from '../../worker/stream/chat-route.js';
import { runUIMessageStream } from '../../worker/stream/run-ui-message-stream.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import { Page, texts, toolParts } from './fixtures/chat-page.js';
import { dropTables } from './fixtures/drop-tables.js';
import { streamingModel, type StreamingModelOptions } from './fixtures/streaming-model.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const SECRET = 'sub-agent-stream-approval-secret-012';
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
let client: Client;
const tables: string[] = [];
const opened: PostgresRunStreamStore[] = [];

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
  // Not env.client: its result() lets the time-skipping server skip ahead, past a waiting call's timeout.
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
}, 120_000);

afterAll(async () => {
  for (const store of opened) await store.close();
  await dropTables(tables);
  await env?.teardown();
});

/** A worker for `agent` (its sub-agents with it) writing to a fresh stream table. */
async function withWorker<T>(
  agent: Agent,
  body: (stream: PostgresRunStreamStore, taskQueue: string, store: MemoryEffectStore) => Promise<T>,
): Promise<T> {
  const table = `stream_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  tables.push(table);
  const stream = new PostgresRunStreamStore(PG_URL, { table });
  opened.push(stream);
  const store = new MemoryEffectStore();
  const taskQueue = `q-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [agent],
    store,
    stream,
    approvalSecret: SECRET,
    workerOptions: { workflowBundle: bundle },
  });
  return worker.runUntil(body(stream, taskQueue, store));
}

/** An agent whose step 0 streams `text` and delegates `tool` (an agent tool), then answers `done`. */
function delegating(
  name: string,
  text: string,
  tool: string,
  sub: Agent,
  done: string,
  toolApproval?: Record<string, 'user-approval'>,
): Agent {
  return defineAgent({
    ...(toolApproval !== undefined ? { toolApproval } : {}),
    name,
    model: streamingModel([{ text, toolCalls: [{ toolName: tool, input: { prompt: 'tides' } }] }, { text: done }], {
      delayMs: 2,
    }),
    tools: { [tool]: defineAgentTool(sub) },
  });
}

/** The text parts of a UI message (a preliminary output), joined. */
const textOf = (output: unknown): string =>
  ((output as UIMessage | undefined)?.parts ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');

type OutputChunk = Extract<UIMessageChunk, { type: 'tool-output-available' }>;

describe("a sub-agent's text in the top run's stream", () => {
  it("streams into the agent tool part as preliminary output while the sub-agent runs, and the part ends with the text the parent's model got", async () => {
    const childText = 'Tides rise twice a day.';
    let shown!: () => void;
    const early = new Promise<void>((resolve) => (shown = resolve));
    // The sub-agent's last token waits until the parent's stream has shown the ones before it
    // (10 s at most: without the preliminary output the test fails on what it saw, not on a hang).
    const hold: StreamingModelOptions['holdBefore'] = (_step, _attempt, index) =>
      index === 4 ? Promise.race([early, new Promise<void>((r) => setTimeout(r, 10_000).unref())]) : undefined;
    const researcher = defineAgent({
      name: 'researcher',
      model: streamingModel([{ text: childText }], { delayMs: 2, holdBefore: hold }),
    });
    const lead = delegating(`lead-${randomUUID()}`, 'Asking.', 'research', researcher, 'Done.');
    const chunks = await withWorker(lead, async (stream, taskQueue) => {
      const workflowId = `lead-${randomUUID()}`;
      await startAgentRun(client, { agent: lead.name, prompt: 'Research tides.', taskQueue, workflowId });
      const seen: UIMessageChunk[] = [];
      for await (const chunk of runUIMessageStream({ client, workflowId, stream, pollMs: 100 })) {
        seen.push(chunk);
        if (chunk.type === 'tool-output-available' && chunk.preliminary === true && textOf(chunk.output) !== '')
          if (!textOf(chunk.output).includes('day.')) shown();
      }
      return seen;
    });
    const outputs = chunks.filter((c): c is OutputChunk => c.type === 'tool-output-available');
    const preliminary = outputs.filter((c) => c.preliminary === true);
    expect(preliminary.every((c) => c.toolCallId === 'call-0-0')).toBe(true);
    // Shown while the sub-agent was still streaming, then whole.
    expect(preliminary.map((c) => textOf(c.output))).toContain('Tides rise twice a');
    expect(textOf(preliminary.at(-1)?.output)).toBe(childText);
    expect(preliminary.at(-1)?.output).toMatchObject({ role: 'assistant', id: expect.stringContaining('chamvi-') });
    // The part's own output comes last: what the parent's model got, not a preliminary one.
    const final = outputs.filter((c) => c.preliminary !== true && c.toolCallId === 'call-0-0');
    expect(final.map((c) => c.output)).toEqual([childText]);
    expect(chunks.indexOf(final[0]!)).toBeGreaterThan(chunks.indexOf(preliminary.at(-1)!));
    const replay = new ReadableStream<UIMessageChunk>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    let message: UIMessage | undefined;
    for await (const m of readUIMessageStream({ stream: replay })) message = m;
    expect(toolParts(message)).toMatchObject([{ type: 'tool-research', state: 'output-available', output: childText }]);
    expect(toolParts(message)[0]?.preliminary).not.toBe(true);
    expect(texts(message)).toEqual(['Asking.', 'Done.']);
  }, 60_000);
});

/** An effect tool posting comments, and the bodies it posted. */
function commentTool() {
  const applied: string[] = [];
  const comment = defineEffectTool({
    description: 'Posts a comment.',
    inputSchema: z.object({ body: z.string() }),
    execute: ({ body }) => {
      applied.push(body);
      return Promise.resolve({ id: applied.length });
    },
  });
  return { comment, applied };
}

/** An agent whose step 0 posts `bodies` (each call waiting for approval), then answers `done`. */
function poster(
  name: string,
  comment: ReturnType<typeof commentTool>['comment'],
  bodies: string[],
  done: string,
): Agent {
  return defineAgent({
    name,
    model: streamingModel(
      [
        { text: 'Posting.', toolCalls: bodies.map((body) => ({ toolName: 'comment', input: { body } })) },
        { text: done },
      ],
      { delayMs: 2 },
    ),
    tools: { comment },
    toolApproval: { comment: 'user-approval' },
  });
}

/** A chat page on `lead`'s worker. */
async function withChat<T>(lead: Agent, body: (page: Page) => Promise<T>): Promise<T> {
  return withWorker(lead, (stream, taskQueue, store) =>
    body(
      new Page(
        chatRoute({
          client,
          stream,
          conversations: store,
          agent: lead.name,
          taskQueue,
          approvalSecret: SECRET,
          pollMs: 100,
        }),
        stream,
      ),
    ),
  );
}

/** The approval of the tool part of `toolCallId` in the page's last message. */
function approvalOf(page: Page, toolCallId: string): Record<string, unknown> | undefined {
  const part = toolParts(page.messages.at(-1)).find((p) => p.toolCallId === toolCallId);
  return part?.approval as Record<string, unknown> | undefined;
}

describe("a sub-agent's approval in the top run's chat", () => {
  it('two levels down, each waiting call is an approval request on the top agent tool part in turn, decided from the chat, each effect applied once', async () => {
    const { comment, applied } = commentTool();
    const archivist = poster('archivist', comment, ['tides', 'tides again'], 'Archived.');
    const researcher = delegating('researcher', 'Researching.', 'archive', archivist, 'Researched.');
    // The agent tool call itself needs approval too: its own request comes first, on the same part.
    const lead = delegating(`lead-${randomUUID()}`, 'Asking.', 'research', researcher, 'Done.', {
      research: 'user-approval',
    });
    const result = await withChat(lead, async (page) => {
      const top = `${page.id}:1`;
      await page.say('Research tides.');
      const own = approvalOf(page, 'call-0-0');
      await page.answer('call-0-0', true);
      // A copy: the page answers in place.
      const first = structuredClone(page.messages.at(-1));
      const [waiting] = await listPendingApprovals(client, top);
      // A page that edits what it was shown is refused, and nothing is decided.
      const saved = structuredClone(page.messages);
      await expect(
        page.answer('call-0-0', true, (part) => {
          const approval = part.approval as { descriptor?: { input?: unknown } };
          if (approval.descriptor !== undefined) approval.descriptor.input = { body: 'something else' };
        }),
      ).rejects.toThrow();
      const refused = (await page.refused?.json()) as { error?: string } | undefined;
      const stillWaiting = (await listPendingApprovals(client, top)).map((p) => p.toolCallId);
      page.messages = saved;
      await page.answer('call-0-0', true);
      const second = approvalOf(page, 'call-0-0');
      const answered = await page.answer('call-0-0', true);
      return { own, first, waiting, refused, stillWaiting, second, answered, top };
    });
    expect(result.own).toMatchObject({ id: `${result.top}:call-0-0` });
    const grandchild = result.waiting?.workflowId;
    expect(grandchild).toMatch(new RegExp(`^${result.top}:research:0:[0-9a-f]{16}:archive:0:[0-9a-f]{16}$`));
    expect(toolParts(result.first)).toMatchObject([
      {
        type: 'tool-research',
        toolCallId: 'call-0-0',
        state: 'approval-requested',
        approval: {
          id: `${grandchild}:call-0-0`,
          requestReason: 'Sub-agent archivist asks to run comment.',
          descriptor: {
            subAgent: { agent: 'archivist', workflowId: grandchild },
            toolCallId: 'call-0-0',
            toolName: 'comment',
            input: { body: 'tides' },
          },
        },
      },
    ]);
    expect(result.refused?.error).toBe('ApprovalAnswerRefusedError');
    expect(result.stillWaiting).toEqual(['call-0-0', 'call-0-1']);
    // The second call of the sub-agent's step, once the first was decided.
    expect(result.second).toMatchObject({
      id: `${grandchild}:call-0-1`,
      descriptor: { toolCallId: 'call-0-1', input: { body: 'tides again' } },
    });
    expect(applied.sort()).toEqual(['tides', 'tides again']);
    expect(toolParts(result.answered)).toMatchObject([
      { type: 'tool-research', state: 'output-available', output: 'Researched.' },
    ]);
    expect(toolParts(result.answered)[0]?.preliminary).not.toBe(true);
    expect(texts(result.answered)).toEqual(['Asking.', 'Done.']);
  }, 90_000);

  it('two calls sharing one sub-agent run both wait for its approval: the chat stream ends on the request, and both end with its text', async () => {
    const { comment, applied } = commentTool();
    const researcher = poster('researcher', comment, ['tides'], 'Researched.');
    const lead = defineAgent({
      name: `lead-${randomUUID()}`,
      model: streamingModel(
        [
          {
            text: 'Asking twice.',
            toolCalls: [0, 1].map(() => ({ toolName: 'research', input: { prompt: 'tides' } })),
          },
          { text: 'Done.' },
        ],
        { delayMs: 2 },
      ),
      tools: { research: defineAgentTool(researcher) },
    });
    const answered = await withChat(lead, async (page) => {
      await page.say('Research tides.');
      expect(approvalOf(page, 'call-0-0')).toMatchObject({ descriptor: { toolName: 'comment' } });
      return page.answer('call-0-0', true);
    });
    expect(applied).toEqual(['tides']);
    expect(toolParts(answered)).toMatchObject([
      { toolCallId: 'call-0-0', state: 'output-available', output: 'Researched.' },
      { toolCallId: 'call-0-1', state: 'output-available', output: 'Researched.' },
    ]);
  }, 90_000);
});
