// Activity options as Temporal schedules them, read back from a run's history: the worker's
// registration (toolDefaults < tools[name], merged by the model step into the plan) over the
// library defaults, and the run's activityOptions.modelStep over the model step's defaults. An
// explicit undefined in any layer keeps the default.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent, defineEffectTool } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker, type AgentRegistration } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  [env, bundle] = await Promise.all([createTimeSkippingEnvironment(), bundleTestWorkflows()]);
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

const note = defineEffectTool({
  description: 'Notes something.',
  inputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ noted: text }),
});

const agent = defineAgent({
  name: 'noter',
  model: scriptedModel([{ toolCalls: [{ toolName: 'note', input: { text: 'a' } }] }, { text: 'Noted.' }]),
  tools: { note },
});

interface Scheduled {
  readonly type: string;
  readonly startToCloseMs?: number;
  readonly heartbeatMs?: number;
  readonly retry: { initialMs?: number; backoff?: number; maxIntervalMs?: number; maxAttempts?: number };
}

const ms = (d: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined =>
  d === null || d === undefined ? undefined : Number(d.seconds ?? 0) * 1000 + Math.round((d.nanos ?? 0) / 1e6);

/** Runs the agent with `registration`'s settings and returns the scheduled options of each activity. */
async function scheduledOptions(
  registration: Omit<AgentRegistration, 'agent'>,
  modelStep?: Record<string, unknown>,
): Promise<Map<string, Scheduled>> {
  const taskQueue = `layering-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [{ agent, ...registration }],
    store: new MemoryEffectStore(),
    workerOptions: { workflowBundle: bundle },
  });
  const handle = await worker.runUntil(async () => {
    const started = await startAgentRun(env.client, {
      agent: 'noter',
      prompt: 'go',
      taskQueue,
      ...(modelStep !== undefined ? { activityOptions: { modelStep } } : {}),
    });
    await started.result();
    return started;
  });
  const scheduled = new Map<string, Scheduled>();
  for (const event of (await handle.fetchHistory()).events ?? []) {
    const a = event.activityTaskScheduledEventAttributes;
    const type = a?.activityType?.name;
    if (a === undefined || a === null || type === undefined || type === null || scheduled.has(type)) continue;
    scheduled.set(type, {
      type,
      startToCloseMs: ms(a.startToCloseTimeout),
      heartbeatMs: ms(a.heartbeatTimeout),
      retry: {
        initialMs: ms(a.retryPolicy?.initialInterval),
        backoff: a.retryPolicy?.backoffCoefficient ?? undefined,
        maxIntervalMs: ms(a.retryPolicy?.maximumInterval),
        maxAttempts: a.retryPolicy?.maximumAttempts ?? undefined,
      },
    });
  }
  return scheduled;
}

describe('activity options as Temporal schedules them', () => {
  it('library defaults < toolDefaults < tools[name], retry field by field, an explicit undefined keeps the default', async () => {
    const scheduled = await scheduledOptions({
      toolDefaults: { heartbeatTimeout: '5 seconds', startToCloseTimeout: undefined, retry: { maximumAttempts: 4 } },
      tools: {
        note: {
          heartbeatTimeout: undefined,
          startToCloseTimeout: undefined,
          retry: { initialInterval: '10 ms', maximumAttempts: undefined, backoffCoefficient: undefined },
        },
      },
    });
    expect(scheduled.get('chamvi.effectCall')).toEqual({
      type: 'chamvi.effectCall',
      startToCloseMs: 600_000,
      heartbeatMs: 5_000,
      retry: { initialMs: 10, backoff: 2, maxIntervalMs: 60_000, maxAttempts: 4 },
    });
  }, 60_000);

  it("the model step: its defaults < the run's activityOptions.modelStep, field by field", async () => {
    const scheduled = await scheduledOptions({}, { startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 3 } });
    expect(scheduled.get('chamvi.modelStep')).toMatchObject({
      startToCloseMs: 120_000,
      retry: { initialMs: 1_000, backoff: 2, maxIntervalMs: 60_000, maxAttempts: 3 },
    });
  }, 60_000);
});
