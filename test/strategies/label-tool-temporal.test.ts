import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Octokit } from '@octokit/rest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createGitHubLabelTool } from '../../examples/github/label-tool.js';
import { defineAgent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { FaultInjector, runAgentUnderTest } from '../../testing/index.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { BOT_TOKEN, OWNER, REPO, openIssue } from '../fixtures/responder.js';

let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  github = await new LocalGitHubServer().start();
}, 120_000);

afterAll(async () => {
  await github?.stop();
  await env?.teardown();
});

describe('the label tool (set semantics) under Temporal', () => {
  it('a crash right after the labels are added retries by adding them again: each label is on the issue once', async () => {
    const issue = openIssue(github);
    const label = createGitHubLabelTool({
      octokit: new Octokit({ baseUrl: github.url, auth: BOT_TOKEN }),
      owner: OWNER,
      repo: REPO,
    });
    const agent = defineAgent({
      name: 'labeler',
      model: scriptedModel([
        { toolCalls: [{ toolName: 'label', input: { issue, labels: ['bug', 'triage'] } }] },
        { text: 'Done.' },
      ]),
      tools: { label },
    });
    const faults = new FaultInjector({ point: 'after-effect', attempt: 1 });
    const { effects } = await runAgentUnderTest({
      env,
      agents: [{ agent, tools: { label: { retry: { initialInterval: '10 ms' } } } }],
      store: new MemoryEffectStore(),
      prompt: `Label issue ${issue}`,
      faults,
    });
    expect(effects).toEqual([expect.objectContaining({ toolName: 'label', outcome: 'executed', attempts: 2 })]);
    const counters = github.counters(OWNER, REPO, issue);
    expect(counters.labelRequests).toBe(2); // the retry really added them again...
    expect(counters.labelsAdded).toBe(2); // ...but only the first request added anything
    expect(
      github.tracker
        .listLabels(OWNER, REPO, issue)
        ?.map((l) => l.name)
        .sort(),
    ).toEqual(['bug', 'triage']);
  });
});
