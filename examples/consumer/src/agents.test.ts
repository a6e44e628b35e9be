import { expect, it } from '@jest/globals';
import { defineAgent } from '@chamvi/temporal';
import { MemoryEffectStore } from '@chamvi/temporal/stores';
import { createTimeSkippingEnvironment, scriptedModel } from '@chamvi/temporal/testing';
import { startAgentRun } from '@chamvi/temporal/client';
import { createAgentWorker } from '@chamvi/temporal/worker';
import { comment } from './tools.js';

it('the responder comments on the issue once, then answers', async () => {
  const env = await createTimeSkippingEnvironment();
  try {
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'comment', input: { issue: 42, body: 'Thanks!' } }] },
      { text: 'Done.' },
    ]);
    const agent = defineAgent({ name: 'responder', model, instructions: 'Answer new issues.', tools: { comment } });
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue: 'test',
      agents: [agent],
      store: new MemoryEffectStore(),
    });
    const result = await worker.runUntil(async () =>
      (await startAgentRun(env.client, { agent: 'responder', prompt: 'go', taskQueue: 'test' })).result(),
    );
    expect(result.text).toBe('Done.');
    expect(result.effects).toEqual([expect.objectContaining({ toolName: 'comment', outcome: 'executed' })]);
  } finally {
    await env.teardown();
  }
}, 60_000);
