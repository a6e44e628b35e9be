// The streaming model call of a step (activities/model-stream.ts) in a Temporal mock activity
// context, against real AI SDK parts (@ai-sdk/openai on a local stand-in of its API, the demo's
// scripted model): it returns what generateText returns, a provider's 401 maps to the same
// non-retryable ModelCallRejectedError, a store that refuses every write changes nothing of the
// result, one that never answers holds the step at most STREAM_CLOSE_BUDGET_MS with one warning in
// the activity's log, and a batch carries the writer's ref only (not the step's input with its conversation).
import { describe, expect, it } from '@jest/globals';
import { createOpenAI } from '@ai-sdk/openai';
import { MockActivityEnvironment } from '@temporalio/testing';
import { isStepCount, tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { callModel, type ModelCallOutcome } from '../../activities/model-stream.js';
import { modelCallFailure } from '../../activities/model-call-error.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import type { RunStreamStore } from '../../src/stream/run-stream-store.js';
import { STREAM_CLOSE_BUDGET_MS } from '../../src/stream/run-stream-writer.js';
import { startProviderApi } from '../operations/fixtures/provider-api.js';

const messages: ModelMessage[] = [{ role: 'user', content: 'Hello?' }];
// Offered as the model step offers tools: without execute, so the calls come back as plans.
const tools = { post: tool({ description: 'Posts.', inputSchema: z.object({ text: z.string() }) }) };
const settings = (model: Parameters<typeof callModel>[0]['model']): Parameters<typeof callModel>[0] => ({
  model,
  messages,
  tools,
  stopWhen: isStepCount(1),
  maxRetries: 0,
});
const scope = { agent: 'asker', step: 0, model: 'openai' };

/** A store whose every append fails, as a database that went away would. */
const refusing = (): RunStreamStore & { tries: number } => {
  const store = Object.assign(new MemoryRunStreamStore(), { tries: 0 });
  store.append = () => {
    store.tries++;
    return Promise.reject(new Error('connection refused'));
  };
  return store;
};

const outcome = async (model: Parameters<typeof callModel>[0]['model'], stream?: RunStreamStore) => {
  const env = new MockActivityEnvironment({ attempt: 1 });
  const r: ModelCallOutcome = await env.run(() => callModel(settings(model), stream, { runId: 'run-1', step: 0 }));
  return { text: r.text, finishReason: r.finishReason, toolCalls: r.toolCalls, messages: r.response.messages };
};

describe('the streaming model call of a step', () => {
  it('returns what generateText returns for the same scripted model: valid, unknown and invalid tool calls', async () => {
    const script = [
      {
        text: 'Posting it.',
        toolCalls: [
          { toolName: 'post', input: { text: 'hi' } },
          { toolName: 'nope', input: {} },
          { toolName: 'post', input: { text: 42 } },
        ],
      },
    ];
    const plain = await outcome(scriptedModel(script));
    const streamed = await outcome(scriptedModel(script), new MemoryRunStreamStore());
    expect(plain.toolCalls.map((c) => c.invalid === true)).toEqual([false, true, true]);
    expect(streamed).toEqual(plain);
  });

  it('returns the same result when the store refuses every write (the stream is display-only)', async () => {
    const script = [{ text: 'Still answered.' }];
    const store = refusing();
    const streamed = await outcome(scriptedModel(script), store);
    expect(store.tries).toBeGreaterThan(0);
    expect(streamed).toEqual(await outcome(scriptedModel(script)));
  });

  it("costs at most STREAM_CLOSE_BUDGET_MS and one warning in the activity's log when the store never answers", async () => {
    const script = [{ text: 'Answered without the stream.' }];
    const store = Object.assign(new MemoryRunStreamStore(), { tries: 0 });
    store.append = () => {
      store.tries++;
      return new Promise<number>(() => undefined);
    };
    const warnings: string[] = [];
    const logger = {
      log: (level: string, message: string) => void (level === 'WARN' && warnings.push(message)),
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: (message: string) => void warnings.push(message),
      error: () => undefined,
    };
    // The scripted call without a stream is the baseline, timed in the same test: what the budget
    // bounds is the time the stream adds, and a loaded machine slows both alike.
    const baselineStarted = performance.now();
    const plain = await outcome(scriptedModel(script));
    const baselineMs = performance.now() - baselineStarted;
    const env = new MockActivityEnvironment({ attempt: 1 }, { logger });
    const started = performance.now();
    const r: ModelCallOutcome = await env.run(() =>
      callModel(settings(scriptedModel(script)), store, { runId: 'run-3', step: 0 }),
    );
    const ms = performance.now() - started;
    // Timers fire late on a loaded machine; a hang (no budget) runs into the 10 s test timeout, and
    // a budget twice as long as STREAM_CLOSE_BUDGET_MS still fails the bound.
    expect(ms).toBeGreaterThanOrEqual(STREAM_CLOSE_BUDGET_MS - 50);
    expect(ms - baselineMs).toBeLessThan(STREAM_CLOSE_BUDGET_MS * 2);
    expect(store.tries).toBe(1);
    expect(warnings).toEqual([
      expect.stringContaining('run stream of run run-3, step 0, attempt 1: the store did not take'),
    ]);
    expect({
      text: r.text,
      finishReason: r.finishReason,
      toolCalls: r.toolCalls,
      messages: r.response.messages,
    }).toEqual(plain);
  }, 10_000);

  it("maps a provider's 401 to the non-retryable ModelCallRejectedError, as without a stream", async () => {
    const api = await startProviderApi([{ status: 401, message: 'Incorrect API key provided: sk-test.' }]);
    try {
      const model = createOpenAI({ baseURL: api.baseUrl, apiKey: 'sk-test' })('gpt-4o-mini');
      const failure = async (stream?: RunStreamStore) => {
        const env = new MockActivityEnvironment({ attempt: 1 });
        const error = await env
          .run(() => callModel(settings(model), stream, { runId: 'run-1', step: 0 }))
          .then(
            () => undefined,
            (e: unknown) => modelCallFailure(e, scope),
          );
        return error as { name?: string; message?: string };
      };
      const plain = await failure();
      const streamed = await failure(new MemoryRunStreamStore());
      // The failure policy makes ModelCallRejectedError non-retryable by its name (src/errors/failure-policy.ts).
      expect(plain?.name).toBe('ModelCallRejectedError');
      expect(streamed?.name).toBe('ModelCallRejectedError');
      expect(streamed?.message).toBe(plain?.message);
      expect(streamed?.message).toContain('401');
    } finally {
      await api.close();
    }
  });

  it("writes batches that carry the writer's ref only, not the rest of the step's input", async () => {
    const store = new MemoryRunStreamStore();
    const env = new MockActivityEnvironment({ attempt: 2 });
    const input = { runId: 'run-2', step: 3, agent: 'asker', messages: [{ role: 'user', content: 'a long history' }] };
    await env.run(() => callModel(settings(scriptedModel([{ text: 'Short.' }, {}, {}, {}])), store, input));
    const { workflowId, runId } = env.context.info.workflowExecution ?? { workflowId: '', runId: '' };
    // Keyed by the run id, the workflow id and (the step's input says nothing else) the run id as first execution run id.
    const batches = await store.read({ runId: 'run-2', workflowId, firstExecutionRunId: 'run-2' }, 0);
    expect(batches.length).toBeGreaterThan(0);
    for (const batch of batches) {
      expect(Object.keys(batch).sort()).toEqual([
        'attempt',
        'cursor',
        'execution',
        'firstExecutionRunId',
        'parts',
        'runId',
        'step',
        'workflowId',
      ]);
      expect(batch).toMatchObject({ runId: 'run-2', step: 3, attempt: 2, execution: runId });
    }
  });
});
