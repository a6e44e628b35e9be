import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Octokit } from '@octokit/rest';
import { z } from 'zod';
import { InvalidEffectToolError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { defineSetEffectTool } from '../../src/strategies/index.js';
import { createGitHubLabelTool } from '../../examples/github/label-tool.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { attempt, crashAfterEffect } from '../strategies/crash-after-effect.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const owner = 'acme';
const repo = 'widgets';

describe('GitHub label tool (set semantics)', () => {
  const github = new LocalGitHubServer();
  let octokit: Octokit;

  beforeAll(async () => {
    await github.start();
    octokit = new Octokit({ baseUrl: github.url, auth: 'bot-token', log });
  });
  afterAll(() => github.stop());

  it('response lost after the labels were added: the retry re-applies, the issue has each label once', async () => {
    const issue = github.tracker.createIssue(owner, repo, { title: 'l', login: 'someone' }).number;
    const store = new MemoryEffectStore();
    const tool = createGitHubLabelTool({ octokit, owner, repo });
    github.dropNextResponse('addLabels');
    await expect(attempt(tool, { issue, labels: ['bug', 'triage'] }, 'run-l-1', store)).rejects.toThrow();
    const retry = await attempt(tool, { issue, labels: ['bug', 'triage'] }, 'run-l-1', store);
    expect(retry.outcome).toBe('executed');
    expect(retry.result).toEqual({ issue, labels: ['bug', 'triage'] });
    expect(github.counters(owner, repo, issue)).toMatchObject({ labelsAdded: 2, labelRequests: 2 });
    expect(github.tracker.listLabels(owner, repo, issue)?.map((l) => l.name)).toEqual(['bug', 'triage']);
  });

  it('worker crash after the effect: same; once recorded, the remote is not called again', async () => {
    const issue = github.tracker.createIssue(owner, repo, { title: 'l', login: 'someone' }).number;
    const store = new MemoryEffectStore();
    const tool = crashAfterEffect(createGitHubLabelTool({ octokit, owner, repo }));
    await expect(attempt(tool, { issue, labels: ['p1'] }, 'run-l-2', store)).rejects.toThrow('simulated worker crash');
    expect((await attempt(tool, { issue, labels: ['p1'] }, 'run-l-2', store)).outcome).toBe('executed');
    expect((await attempt(tool, { issue, labels: ['p1'] }, 'run-l-2', store)).outcome).toBe('recorded');
    expect(github.counters(owner, repo, issue)).toMatchObject({ labelsAdded: 1, labelRequests: 2 });
  });

  it('defineSetEffectTool refuses an alreadyApplied hook', () => {
    expect(() =>
      defineSetEffectTool({
        inputSchema: z.object({}),
        execute: async () => 1,
        alreadyApplied: (async () => 1) as never,
      }),
    ).toThrow(InvalidEffectToolError);
  });
});
