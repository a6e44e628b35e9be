import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOpenAI } from '@ai-sdk/openai';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { defineAgent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import { summarizeActivities } from '../../testing/run-agent-under-test.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun, type StartAgentRunOptions } from '../../client/start-agent-run.js';
import { startProviderApi, type ProviderApi, type ProviderReply } from './fixtures/provider-api.js';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createDevServerEnvironment();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** The run's failure as the client sees it: the model step's ApplicationFailure. */
async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const activity = (error as WorkflowFailedError).cause;
  expect(activity).toBeInstanceOf(ActivityFailure);
  const cause = (activity as ActivityFailure).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

/**
 * Runs an agent whose model is @ai-sdk/openai against the fake API, with a model-step retry
 * policy that would take minutes if it retried (`initialInterval` 30 s, 10 attempts).
 */
async function runAgainst(
  replies: readonly ProviderReply[],
  body: (run: { api: ProviderApi; start: () => ReturnType<typeof startAgentRun> }) => Promise<void>,
  setup: {
    readonly apiKey?: string;
    readonly initialInterval?: string;
    readonly messages?: StartAgentRunOptions['messages'];
    /** Stream the model steps (streamText) to an in-memory run stream. */
    readonly stream?: boolean;
  } = { apiKey: 'sk-test' },
): Promise<void> {
  const api = await startProviderApi(replies);
  const taskQueue = `model-errors-${randomUUID()}`;
  const openai = createOpenAI({
    baseURL: api.baseUrl,
    ...(setup.apiKey !== undefined ? { apiKey: setup.apiKey } : {}),
  });
  const agent = defineAgent({ name: 'asker', model: openai('gpt-4o-mini'), instructions: 'Answer.' });
  let worker: Worker | undefined;
  try {
    worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      ...(setup.stream === true ? { stream: new MemoryRunStreamStore() } : {}),
    });
    await worker.runUntil(
      body({
        api,
        start: () =>
          startAgentRun(env.client, {
            agent: 'asker',
            ...(setup.messages !== undefined ? { messages: setup.messages } : { prompt: 'Hello?' }),
            taskQueue,
            activityOptions: {
              modelStep: { retry: { initialInterval: setup.initialInterval ?? '30 seconds', maximumAttempts: 10 } },
            },
          }),
      }),
    );
  } finally {
    await api.close();
  }
}

describe('model-step errors that retrying cannot fix fail the run at once', () => {
  it('a 401 from the provider fails the run after one attempt with ModelCallRejectedError naming the status and the fix', async () => {
    await runAgainst([{ status: 401, message: 'Incorrect API key provided: sk-test.' }], async ({ api, start }) => {
      const handle = await start();
      const failure = await failureOf(handle.result());
      expect(failure.type).toBe('ModelCallRejectedError');
      expect(failure.nonRetryable).toBe(true);
      expect(failure.message).toContain('401');
      expect(failure.message).toContain('Incorrect API key provided');
      expect(failure.message).toContain('asker');
      expect(failure.message).toMatch(/API key/);
      expect(api.arrivals).toHaveLength(1);
      const steps = (await summarizeActivities(handle)).filter((a) => a.type === 'chamvi.modelStep');
      expect(steps).toEqual([expect.objectContaining({ attempt: 1, status: 'failed' })]);
    });
  }, 30_000);

  it('a 404 (no such model) and a 400 (invalid request) fail the run after one attempt each', async () => {
    for (const status of [404, 400]) {
      await runAgainst([{ status, message: `provider says ${status}` }], async ({ api, start }) => {
        const failure = await failureOf((await start()).result());
        expect(failure.type).toBe('ModelCallRejectedError');
        expect(failure.message).toContain(`provider says ${status}`);
        expect(api.arrivals).toHaveLength(1);
      });
    }
  }, 30_000);

  it('a missing API key (LoadAPIKeyError) fails the run at once, before any request, naming the variable to set', async () => {
    const saved = process.env['OPENAI_API_KEY'];
    delete process.env['OPENAI_API_KEY'];
    try {
      await runAgainst(
        [{ text: 'never asked' }],
        async ({ api, start }) => {
          const failure = await failureOf((await start()).result());
          expect(failure.type).toBe('ModelCallRejectedError');
          expect(failure.message).toContain('OPENAI_API_KEY');
          expect(api.arrivals).toHaveLength(0);
        },
        {},
      );
    } finally {
      if (saved !== undefined) process.env['OPENAI_API_KEY'] = saved;
    }
  }, 30_000);
});

describe("the AI SDK's prompt validation errors fail the run at once", () => {
  it.each([
    ['without a stream', undefined],
    ['streaming (streamText)', true],
  ])(
    'a history with a tool call lacking its result fails after one attempt with ModelCallRejectedError naming the call and the fix (%s)',
    async (_label, stream) => {
      await runAgainst(
        [{ text: 'never asked' }],
        async ({ api, start }) => {
          const handle = await start();
          const failure = await failureOf(handle.result());
          expect(failure.type).toBe('ModelCallRejectedError');
          expect(failure.nonRetryable).toBe(true);
          expect(failure.message).toContain('tool calls without a tool result (call_lost)');
          expect(failure.message).toContain('stored conversation');
          expect(api.arrivals).toHaveLength(0);
          const steps = (await summarizeActivities(handle)).filter((a) => a.type === 'chamvi.modelStep');
          expect(steps).toEqual([expect.objectContaining({ attempt: 1, status: 'failed' })]);
        },
        {
          apiKey: 'sk-test',
          // Seconds apart, ten attempts: a retried step would outlast the test.
          initialInterval: '5 seconds',
          messages: [
            { role: 'user', content: 'Comment on issue 7.' },
            {
              role: 'assistant',
              content: [{ type: 'tool-call', toolCallId: 'call_lost', toolName: 'comment', input: { issue: 7 } }],
            },
            { role: 'user', content: 'And now?' },
          ],
          ...(stream !== undefined ? { stream } : {}),
        },
      );
    },
    30_000,
  );

  it('a message with an unknown role (InvalidMessageRoleError) fails after one attempt with ModelCallRejectedError', async () => {
    await runAgainst(
      [{ text: 'never asked' }],
      async ({ api, start }) => {
        const failure = await failureOf((await start()).result());
        expect(failure.type).toBe('ModelCallRejectedError');
        expect(failure.message).toContain('narrator');
        expect(api.arrivals).toHaveLength(0);
      },
      {
        apiKey: 'sk-test',
        initialInterval: '5 seconds',
        messages: [{ role: 'narrator' as 'user', content: 'Once upon a time.' }],
      },
    );
  }, 30_000);
});

describe('retryable provider errors keep the retry policy', () => {
  it("a 429 with retry-after: 1 is retried after about a second instead of the policy's 30 s interval, and the run completes", async () => {
    await runAgainst(
      [{ status: 429, headers: { 'retry-after': '1' }, message: 'Rate limit reached' }, { text: 'Hi!' }],
      async ({ api, start }) => {
        const handle = await start();
        const result = await handle.result();
        expect(result.text).toBe('Hi!');
        expect(api.arrivals).toHaveLength(2);
        const gap = (api.arrivals[1] ?? 0) - (api.arrivals[0] ?? 0);
        expect(gap).toBeGreaterThanOrEqual(900);
        expect(gap).toBeLessThan(10_000);
      },
    );
  }, 25_000);

  it('a 503 without retry-after is retried by the retry policy (not failed at once)', async () => {
    await runAgainst(
      [{ status: 503, message: 'overloaded' }, { text: 'Back.' }],
      async ({ api, start }) => {
        const handle = await start();
        const result = await handle.result();
        expect(result.text).toBe('Back.');
        expect(api.arrivals).toHaveLength(2);
        const steps = (await summarizeActivities(handle)).filter((a) => a.type === 'chamvi.modelStep');
        expect(steps).toEqual([expect.objectContaining({ attempt: 2, status: 'completed' })]);
      },
      { apiKey: 'sk-test', initialInterval: '200 ms' },
    );
  }, 30_000);
});
