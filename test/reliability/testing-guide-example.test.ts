import { expect, it } from '@jest/globals';
import { z } from 'zod';
import { defineAgent, defineEffectTool } from '@chamvi/temporal';
import { MemoryEffectStore } from '@chamvi/temporal/stores';
import { FaultInjector, runAgentUnderTest, scriptedModel } from '@chamvi/temporal/testing';

const sent: string[] = []; // stands in for your remote system (use a local server of it in real tests)

const notify = defineEffectTool({
  description: 'Tells the team.',
  inputSchema: z.object({ text: z.string() }),
  effectKey: ({ text }, ctx) => `${ctx.run.runId}:notify:${text}`,
  alreadyApplied: async (key) => (sent.includes(key) ? { sent: true } : undefined),
  execute: async ({ text }, { context }) => {
    sent.push(`${context.run.runId}:notify:${text}`);
    return { sent: true };
  },
});

const agent = defineAgent({
  name: 'notifier',
  model: scriptedModel([{ toolCalls: [{ toolName: 'notify', input: { text: 'deployed' } }] }, { text: 'Done.' }]),
  tools: { notify },
});

it('a crash right after the effect leaves exactly one notification', async () => {
  const faults = new FaultInjector({ point: 'after-effect', attempt: 1 }); // crash once, in the crash window
  const { effects, counts } = await runAgentUnderTest({
    agents: [{ agent, tools: { notify: { retry: { initialInterval: '10 ms' } } } }],
    store: new MemoryEffectStore(),
    prompt: 'Tell the team we deployed.',
    faults,
  });
  expect(faults.count()).toBe(1); // the fault fired: the retry really ran after a crash
  expect(sent).toHaveLength(1); // not 2: the retry found it through alreadyApplied
  expect(effects).toEqual([expect.objectContaining({ outcome: 'reconciled', attempts: 2 })]);
  expect(counts['chamvi.effectCall']).toBe(1); // one activity, retried once
}, 60_000);
