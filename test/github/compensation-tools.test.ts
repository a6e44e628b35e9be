// The GitHub tools' undos against the local GitHub server through Octokit: the comment is deleted by
// its marker, the labels are removed, each at most once, with the remote's own counts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Octokit } from '@octokit/rest';
import { createToolContext } from '../../src/context/tool-context.js';
import { applyCompensation } from '../../src/effects/compensation.js';
import type { EffectTool } from '../../src/effects/define-effect-tool.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { signedEffectMarker } from '../../src/strategies/index.js';
import { createGitHubCommentTool } from '../../examples/github/comment-tool.js';
import { createGitHubLabelTool } from '../../examples/github/label-tool.js';
import { LocalGitHubServer } from '../../demo/github/index.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const quiet = { warn: () => undefined };
const owner = 'acme';
const repo = 'widgets';
const secret = 'comment-secret';

describe('undos of the GitHub tools, against the GitHub fake', () => {
  const github = new LocalGitHubServer({ tokens: { 'bot-token': 'chamvi-bot', 'user-token': 'mallory' } });
  let bot: Octokit;
  let mallory: Octokit;

  beforeAll(async () => {
    await github.start();
    bot = new Octokit({ baseUrl: github.url, auth: 'bot-token', log });
    mallory = new Octokit({ baseUrl: github.url, auth: 'user-token', log });
  });
  afterAll(() => github.stop());

  const newIssue = () => github.tracker.createIssue(owner, repo, { title: 't', login: 'mallory' }).number;

  /** Applies `input` with `tool` through the protocol; `undo()` compensates it. */
  async function applied(tool: unknown, toolName: string, input: unknown) {
    const store = new MemoryEffectStore();
    const ctx = createToolContext({ runId: `run-${Math.random()}`, agent: 'responder' });
    const effectTool = tool as EffectTool;
    const { report, result } = await applyEffect(
      { tool: effectTool, toolName, input, ctx, options: { toolCallId: 'c1', messages: [], context: ctx } },
      { store, logger: quiet },
    );
    const undo = () =>
      applyCompensation(
        { tool: effectTool, toolName, input, ctx, key: report.key, toolCallId: 'c1' },
        { store, logger: quiet },
      );
    return { key: report.key, result, undo };
  }

  const commentTool = () =>
    createGitHubCommentTool({ octokit: bot, owner, repo, botLogin: 'chamvi-bot', markerSecret: secret });

  it('the comment undo deletes the comment found by its marker, and only that one', async () => {
    const issue = newIssue();
    await bot.rest.issues.createComment({ owner, repo, issue_number: issue, body: 'another bot comment' });
    const { undo } = await applied(commentTool(), 'comment', { issue, body: 'Thanks!' });
    const { result, report } = await undo();
    expect(report.outcome).toBe('executed');
    expect(result).toMatchObject({ issue, deletedCommentId: expect.any(Number) });
    expect(github.tracker.listComments(owner, repo, issue)?.map((c) => c.body)).toEqual(['another bot comment']);
    expect(github.counters(owner, repo, issue)).toMatchObject({ commentsCreated: 2, commentsDeleted: 1 });
  });

  it('a delete whose response is lost is not sent again: the retry finds the comment gone (alreadyCompensated)', async () => {
    const issue = newIssue();
    const { undo } = await applied(commentTool(), 'comment', { issue, body: 'Thanks!' });
    github.dropNextResponse('deleteComment');
    await expect(undo()).rejects.toThrow();
    expect(github.counters(owner, repo, issue).commentsDeleted).toBe(1);
    const retry = await undo();
    expect(retry.report.outcome).toBe('reconciled');
    expect(github.counters(owner, repo, issue).commentsDeleted).toBe(1);
  });

  it('a comment by someone else carrying a copy of the marker is never deleted', async () => {
    const issue = newIssue();
    const { key, undo } = await applied(commentTool(), 'comment', { issue, body: 'Thanks!' });
    await mallory.rest.issues.createComment({
      owner,
      repo,
      issue_number: issue,
      body: `planted\n${signedEffectMarker(key, secret)}`,
    });
    await undo();
    expect(github.tracker.listComments(owner, repo, issue)?.map((c) => c.user.login)).toEqual(['mallory']);
  });

  it('the label undo removes the labels the call added; a retry after a lost response removes nothing more', async () => {
    const issue = newIssue();
    const label = createGitHubLabelTool({ octokit: bot, owner, repo });
    const { undo } = await applied(label, 'label', { issue, labels: ['bug', 'triage'] });
    await bot.rest.issues.addLabels({ owner, repo, issue_number: issue, labels: ['kept'] });
    github.dropNextResponse('removeLabel');
    await expect(undo()).rejects.toThrow();
    const retry = await undo();
    expect(retry.report.outcome).toBe('executed');
    expect(github.tracker.listLabels(owner, repo, issue)?.map((l) => l.name)).toEqual(['kept']);
    expect(github.counters(owner, repo, issue).labelsRemoved).toBe(2);
  });
});
