// The testing kit's fault injection under Temporal (time-skipping server): a hit's attempt is
// Temporal's activity attempt, and the effect-store activity's write is not a protocol point.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { z } from 'zod';
import { defineAgent, defineEffectTool } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { FaultInjector, runAgentUnderTest, scriptedModel } from '../../testing/index.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  [env, bundle] = await Promise.all([createTimeSkippingEnvironment(), bundleTestWorkflows()]);
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

function noteAgent(notes: string[]) {
  const note = defineEffectTool({
    description: 'Notes something.',
    inputSchema: z.object({ text: z.string() }),
    alreadyApplied: async (_key, { text }) => (notes.includes(text) ? { noted: text } : undefined),
    execute: async ({ text }) => {
      notes.push(text);
      return { noted: text };
    },
  });
  const agent = defineAgent({
    name: 'noter',
    model: scriptedModel([{ toolCalls: [{ toolName: 'note', input: { text: 'a' } }] }, { text: 'Noted.' }]),
    tools: { note },
  });
  return { agent, tools: { note: { retry: { initialInterval: '10 ms' } } } };
}

describe('FaultInjector under Temporal', () => {
  it("a hit's attempt is Temporal's activity attempt: a crash on attempt 1 is retried, and attempt 2 goes through", async () => {
    const notes: string[] = [];
    const attempts: Array<number | undefined> = [];
    const faults = new FaultInjector([
      { point: 'after-effect', attempt: 1 },
      { point: 'in-already-applied', times: Infinity, mode: (hit) => void attempts.push(hit.attempt) },
    ]);
    const run = await runAgentUnderTest({
      env,
      workflowBundle: bundle,
      agents: [noteAgent(notes)],
      store: new MemoryEffectStore(),
      prompt: 'go',
      faults,
    });
    expect(attempts).toEqual([1, 2]);
    expect(faults.fired.filter((hit) => hit.point === 'after-effect')).toEqual([
      expect.objectContaining({ attempt: 1, toolName: 'note' }),
    ]);
    expect(notes).toEqual(['a']);
    expect(run.effects).toEqual([expect.objectContaining({ outcome: 'reconciled', attempts: 2 })]);
  }, 60_000);

  it("the chamvi.recordEffect activity's write is no protocol point: with every record write failing, it records at once", async () => {
    const notes: string[] = [];
    const faults = new FaultInjector({ point: 'before-record', times: Infinity });
    const store = new MemoryEffectStore();
    const run = await runAgentUnderTest({
      env,
      workflowBundle: bundle,
      agents: [noteAgent(notes)],
      store,
      prompt: 'go',
      faults,
    });
    expect(faults.count('before-record')).toBe(1);
    expect(run.effects).toEqual([expect.objectContaining({ outcome: 'executed', recordPending: true })]);
    const recordActivities = run.activities.filter((a) => a.type === 'chamvi.recordEffect');
    expect(recordActivities.map((a) => [a.attempt, a.status])).toEqual([[1, 'completed']]);
    expect(await store.get(run.effects[0]?.key ?? '')).toMatchObject({ origin: 'executed' });
  }, 60_000);
});
