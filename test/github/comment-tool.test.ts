import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Octokit } from '@octokit/rest';
import { MockLanguageModelV4 } from 'ai/test';
import { defineAgent, effectMarker, runAgent, type AgentRunResult } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { signedEffectMarker } from '../../src/strategies/index.js';
import { commentEffectKey, createGitHubCommentTool } from '../../examples/github/comment-tool.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { attempt } from '../strategies/crash-after-effect.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const owner = 'acme';
const repo = 'widgets';
const secret = 'comment-secret';
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** Step 0 calls the comment tool (with a body that differs on every call, as a redone step may); then it stops. */
function commentingModel(issue: number) {
  let calls = 0;
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const step = prompt.filter((m) => m.role === 'assistant').length;
      if (step > 0)
        return {
          content: [{ type: 'text', text: 'done' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        };
      calls += 1;
      const input = JSON.stringify({ issue, body: `Thanks for the report (draft ${calls})` });
      return {
        content: [{ type: 'tool-call', toolCallId: `c${calls}`, toolName: 'comment', input }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

describe('GitHub comment tool (signed marker, paginated alreadyApplied)', () => {
  const github = new LocalGitHubServer({ tokens: { 'bot-token': 'chamvi-bot', 'user-token': 'mallory' } });
  let bot: Octokit;

  beforeAll(async () => {
    await github.start();
    bot = new Octokit({ baseUrl: github.url, auth: 'bot-token', log });
  });
  afterAll(() => github.stop());

  const tool = () =>
    createGitHubCommentTool({ octokit: bot, owner, repo, botLogin: 'chamvi-bot', markerSecret: secret });

  /** An issue with `n` comments by others, so the bot's comment lands beyond the first page of 100. */
  function busyIssue(n: number): number {
    const issue = github.tracker.createIssue(owner, repo, { title: 'busy', login: 'mallory' });
    for (let i = 0; i < n; i++) github.tracker.addComment(owner, repo, issue.number, `me too ${i}`, 'mallory');
    return issue.number;
  }

  const botComments = (issue: number) =>
    (github.tracker.listComments(owner, repo, issue) ?? []).filter((c) => c.user.login === 'chamvi-bot');

  it('runAgent: the comment is applied, the answer lost; a retry with the same runId and store reconciles (one comment)', async () => {
    const issue = busyIssue(150);
    const store = new MemoryEffectStore();
    const agent = defineAgent({ name: 'responder', model: commentingModel(issue), tools: { comment: tool() } });

    github.failNextCommentResponse();
    const first = await runAgent(agent, { prompt: 'answer', store, runId: 'run-gh-1', maxSteps: 3 }).catch(
      (error: unknown) => error,
    );
    expect(github.counters(owner, repo, issue).commentsCreated).toBe(151);
    if (!(first instanceof Error)) expect((first as AgentRunResult).effects).toEqual([]);

    const retry = await runAgent(agent, { prompt: 'answer', store, runId: 'run-gh-1', maxSteps: 3 });
    expect(retry.effects.map((e) => e.outcome)).toEqual(['reconciled']);
    expect(retry.effects[0]?.key).toBe('run-gh-1:github-comment:' + issue + ':0');
    expect(github.counters(owner, repo, issue).commentsCreated).toBe(151);
    expect(botComments(issue)).toHaveLength(1);
    expect(botComments(issue)[0]?.body).toContain('draft 1');

    const again = await runAgent(agent, { prompt: 'answer', store, runId: 'run-gh-1', maxSteps: 3 });
    expect(again.effects.map((e) => e.outcome)).toEqual(['recorded']);
    expect(botComments(issue)).toHaveLength(1);
  });

  it('planted markers (other author, bot account without the secret, prefix key) never count as applied', async () => {
    const issue = busyIssue(120);
    const runId = 'run-gh-2';
    const key = commentEffectKey(issue, { run: { runId } } as never, { messages: [] });
    github.tracker.addComment(owner, repo, issue, `planted ${effectMarker(key)}`, 'mallory');
    github.tracker.addComment(owner, repo, issue, `planted ${signedEffectMarker(key, 'guess')}`, 'mallory');
    github.tracker.addComment(owner, repo, issue, `copied ${signedEffectMarker(key, secret)}`, 'mallory');
    github.tracker.addComment(owner, repo, issue, `injected ${effectMarker(key)}`, 'chamvi-bot');
    github.tracker.addComment(owner, repo, issue, `forged ${signedEffectMarker(key, 'guess')}`, 'chamvi-bot');
    github.tracker.addComment(owner, repo, issue, `prefix ${signedEffectMarker(`${key}0`, secret)}`, 'chamvi-bot');

    const store = new MemoryEffectStore();
    const done = await attempt(tool(), { issue, body: 'real answer' }, runId, store);
    expect(done.outcome).toBe('executed');
    expect(botComments(issue).filter((c) => c.body.startsWith('real answer'))).toHaveLength(1);
  });

  it('a marker the model writes into the body is defused; only the tool`s own signed marker counts', async () => {
    const issue = busyIssue(0);
    const runId = 'run-gh-3';
    const key = commentEffectKey(issue, { run: { runId } } as never, { messages: [] });
    const store = new MemoryEffectStore();
    const body = `ignore this ${effectMarker(key)} ${signedEffectMarker(`${key}:other`, secret)}`;
    await attempt(tool(), { issue, body }, runId, store);
    const [posted] = botComments(issue);
    expect(posted?.body).not.toContain(effectMarker(key));
    expect(posted?.body).toContain(signedEffectMarker(key, secret));
  });

  it('a failing read in alreadyApplied runs nothing; the retry reconciles', async () => {
    const issue = busyIssue(101);
    const store = new MemoryEffectStore();
    github.failNextCommentResponse();
    await expect(attempt(tool(), { issue, body: 'x' }, 'run-gh-4', store)).rejects.toThrow();
    github.failNextRequest('listComments', 502, 1);
    await expect(attempt(tool(), { issue, body: 'x' }, 'run-gh-4', store)).rejects.toMatchObject({
      name: 'EffectOutcomeUnknownError',
      retryable: true,
    });
    const third = await attempt(tool(), { issue, body: 'x' }, 'run-gh-4', store);
    expect(third.outcome).toBe('reconciled');
    expect(botComments(issue)).toHaveLength(1);
    expect(github.counters(owner, repo, issue).commentsCreated).toBe(102);
  });
});
