// A run's stored conversation is the AI SDK's ModelMessage[]: it goes, as it is and with no cast,
// into the next turn's run (and into generateText); the output carries the conversation's
// reference, not its `messages`.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { tool, type ModelMessage } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { agentConversation, loadConversation, startAgentRun, type AgentRunOutput } from '../../client/index.js';
import { createAgentWorker } from '../../worker/index.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

describe("a run's conversation as the AI SDK's ModelMessage[]", () => {
  it("agentConversation's messages start the next turn's run as they are, and its model sees the first turn's tool result", async () => {
    let secondTurn: LanguageModelV4CallOptions['prompt'] = [];
    const lookup = tool({
      description: 'Looks up an order.',
      inputSchema: z.object({ order: z.number() }),
      execute: async ({ order }) => ({ order, status: 'shipped' }),
    });
    const agent = defineAgent({
      name: 'clerk',
      instructions: 'Answer about orders.',
      tools: { lookup },
      model: scriptedModel([
        { toolCalls: [{ toolName: 'lookup', input: { order: 7 } }] },
        { text: 'Order 7 has shipped.' },
        ({ prompt }) => {
          secondTurn = prompt;
          return { text: 'It shipped, as I said.' };
        },
      ]),
    });
    const store = new MemoryEffectStore();
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store,
      workerOptions: { workflowBundle: bundle },
    });
    await worker.runUntil(async () => {
      const first = await startAgentRun(env.client, { agent: 'clerk', prompt: 'Where is order 7?', taskQueue });
      const output: AgentRunOutput = await first.result();
      const { messages } = await agentConversation(env.client, first.workflowId, store);
      // Typed as the AI SDK's messages: no cast between the store and the next call.
      const history: ModelMessage[] = messages;
      const loaded: ModelMessage[] = await loadConversation(store, output);
      expect(loaded).toEqual(history);
      expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      // @ts-expect-error AgentRunOutput has no `messages`: loadConversation(store, output) reads them.
      expect(output.messages).toBeUndefined();

      const second = await startAgentRun(env.client, {
        agent: 'clerk',
        messages: [...history, { role: 'user', content: 'And now?' }],
        taskQueue,
      });
      expect((await second.result()).text).toBe('It shipped, as I said.');
    });
    const tool_ = secondTurn.find((m) => m.role === 'tool');
    expect(JSON.stringify(tool_)).toContain('shipped');
    expect(secondTurn.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'And now?' }] });
  }, 60_000);
});
