// The sub-agents guide's example (examples/sub-agents/research-team.ts) as a user runs it: a lead
// that delegates two questions to researcher sub-agents under one token budget, which runs out in
// the researchers and is raised by the approver from the lead's run. On the dev server: the
// time-skipping test server loses a workflow update now and then (temporalio/sdk-java#1903), and
// here about one run in seven hung in `decideApproval`'s update; nothing in this run needs time
// skipped.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { randomUUID } from 'node:crypto';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { approveMoreBudget, researchTeam, startResearch } from '../../examples/sub-agents/research-team.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

const SECRET = 'guide-approval-secret-of-32-bytes!!!';

type Prompt = LanguageModelV4CallOptions['prompt'];

function userText(prompt: Prompt): string {
  const user = prompt.find((m) => m.role === 'user');
  if (user === undefined || typeof user.content === 'string') return '';
  return user.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function results(prompt: Prompt): string[] {
  return prompt.flatMap((m) =>
    m.role === 'tool'
      ? m.content.flatMap((p) => (p.type === 'tool-result' ? [String((p.output as { value?: unknown }).value)] : []))
      : [],
  );
}

const tokens = (input: number) => ({ usage: { inputTokens: input, outputTokens: 0 } });

describe('the sub-agents guide (dev server)', () => {
  it("a lead's researchers run as sub-agents under one budget, raised from the lead's run when they use it up", async () => {
    const searched: string[] = [];
    const lead = researchTeam(
      {
        lead: scriptedModel([
          {
            toolCalls: [
              { toolName: 'research', input: { prompt: 'When do tides peak?' } },
              { toolName: 'research', input: { prompt: 'Why are there two tides a day?' } },
            ],
            ...tokens(100_000),
          },
          ({ prompt }) => ({ text: results(prompt).join(' '), ...tokens(10_000) }),
        ]),
        researcher: scriptedModel([
          ({ prompt }) => ({
            toolCalls: [{ toolName: 'search', input: { query: userText(prompt) } }],
            ...tokens(60_000),
          }),
          ({ prompt }) => ({ text: `[${userText(prompt)}: ${results(prompt).join('')}]`, ...tokens(10_000) }),
        ]),
      },
      (query) => {
        searched.push(query);
        return `found ${query.length}`;
      },
    );
    const taskQueue = `guide-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [lead],
      store: new MemoryEffectStore(),
      approvalSecret: SECRET,
      workerOptions: { workflowBundle: bundle },
    });
    await worker.runUntil(async () => {
      const handle = await startResearch(env.client, 'Explain the tides.', taskQueue);
      // Both researchers' first steps (2 × 60k) took the tree past 200k: their second steps wait.
      process.env.CHAMVI_APPROVAL_SECRET = SECRET;
      let record;
      for (let i = 0; i < 200 && record === undefined; i++) {
        record = await approveMoreBudget(env.client, handle.workflowId, 'ada');
        if (record === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      delete process.env.CHAMVI_APPROVAL_SECRET;
      expect(record).toMatchObject({ toolName: 'chamvi.budget', approved: true, approver: 'ada' });
      const output = await handle.result();
      expect(output.text).toBe('[When do tides peak?: found 19] [Why are there two tides a day?: found 30]');
      expect(searched.sort()).toEqual(['When do tides peak?', 'Why are there two tides a day?']);
      expect(output.children?.map((c) => c.usage)).toEqual([
        { steps: 2, inputTokens: 70_000, outputTokens: 0 },
        { steps: 2, inputTokens: 70_000, outputTokens: 0 },
      ]);
      expect(output.usage).toEqual({ steps: 4 + 2, inputTokens: 250_000, outputTokens: 0 });
      expect(output.approvals).toHaveLength(1);
      expect(output.budgetExhausted).toBeUndefined();
    });
  });
});
