import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Octokit } from '@octokit/rest';
import { LocalGitHubServer } from '../../demo/github/index.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const owner = 'acme';
const repo = 'widgets';

describe('LocalGitHubServer with the real Octokit client', () => {
  const github = new LocalGitHubServer({ tokens: { 'bot-token': 'chamvi-bot', 'user-token': 'mallory' } });
  let bot: Octokit;
  let mallory: Octokit;

  beforeAll(async () => {
    await github.start();
    bot = new Octokit({ baseUrl: github.url, auth: 'bot-token', log });
    mallory = new Octokit({ baseUrl: github.url, auth: 'user-token', log });
  });
  afterAll(() => github.stop());

  it('creates, gets and lists issues', async () => {
    const created = await mallory.rest.issues.create({ owner, repo, title: 'Broken', body: 'It breaks' });
    expect(created.status).toBe(201);
    expect(created.data.user?.login).toBe('mallory');
    const got = await bot.rest.issues.get({ owner, repo, issue_number: created.data.number });
    expect(got.data.title).toBe('Broken');
    const listed = await bot.rest.issues.listForRepo({ owner, repo });
    expect(listed.data.map((i) => i.number)).toContain(created.data.number);
  });

  it('answers 401 for an unknown token and for no token, and accepts Bearer', async () => {
    const stranger = new Octokit({ baseUrl: github.url, auth: 'nope', log });
    await expect(stranger.rest.issues.listForRepo({ owner, repo })).rejects.toMatchObject({ status: 401 });
    const anonymous = new Octokit({ baseUrl: github.url, log });
    await expect(anonymous.rest.issues.listForRepo({ owner, repo })).rejects.toMatchObject({ status: 401 });
    const res = await fetch(`${github.url}/repos/${owner}/${repo}/issues`, {
      headers: { authorization: 'Bearer bot-token' },
    });
    expect(res.status).toBe(200);
  });

  it('creates a comment as the token user and 404s for a missing issue', async () => {
    const issue = await bot.rest.issues.create({ owner, repo, title: 'c' });
    const comment = await bot.rest.issues.createComment({ owner, repo, issue_number: issue.data.number, body: 'hi' });
    expect(comment.status).toBe(201);
    expect(comment.data).toMatchObject({ body: 'hi', user: { login: 'chamvi-bot' } });
    expect(typeof comment.data.id).toBe('number');
    expect(Date.parse(comment.data.created_at)).not.toBeNaN();
    expect(github.counters(owner, repo, issue.data.number).commentsCreated).toBe(1);
    await expect(bot.rest.issues.createComment({ owner, repo, issue_number: 9999, body: 'x' })).rejects.toMatchObject({
      status: 404,
    });
  });

  it('pages comments like GitHub: Link rel="next"/"last", per_page capped at 100, paginate reads all 250', async () => {
    const issue = github.tracker.createIssue(owner, repo, { title: 'busy', login: 'mallory' });
    for (let i = 1; i <= 250; i++) github.tracker.addComment(owner, repo, issue.number, `comment ${i}`, 'mallory');

    const first = await bot.rest.issues.listComments({ owner, repo, issue_number: issue.number, per_page: 100 });
    expect(first.data).toHaveLength(100);
    const link = first.headers.link ?? '';
    expect(link).toMatch(
      /^<http:\/\/127\.0\.0\.1:\d+\/repos\/acme\/widgets\/issues\/\d+\/comments\?per_page=100&page=2>; rel="next", <[^>]+page=3>; rel="last"$/,
    );

    const middle = await bot.rest.issues.listComments({
      owner,
      repo,
      issue_number: issue.number,
      per_page: 100,
      page: 2,
    });
    expect(middle.headers.link).toMatch(/rel="prev".*rel="next".*rel="last".*rel="first"/);
    const last = await bot.rest.issues.listComments({
      owner,
      repo,
      issue_number: issue.number,
      per_page: 100,
      page: 3,
    });
    expect(last.data).toHaveLength(50);
    expect(last.headers.link).not.toMatch(/rel="next"/);

    const capped = await bot.rest.issues.listComments({ owner, repo, issue_number: issue.number, per_page: 500 });
    expect(capped.data).toHaveLength(100);
    const byDefault = await bot.rest.issues.listComments({ owner, repo, issue_number: issue.number });
    expect(byDefault.data).toHaveLength(30);

    const all = await bot.paginate(bot.rest.issues.listComments, {
      owner,
      repo,
      issue_number: issue.number,
      per_page: 100,
    });
    expect(all).toHaveLength(250);
    expect(all[0]?.body).toBe('comment 1');
    expect(all[249]?.body).toBe('comment 250');
  });

  it('adds labels with set semantics and lists them', async () => {
    const issue = await bot.rest.issues.create({ owner, repo, title: 'l' });
    const n = issue.data.number;
    const once = await bot.rest.issues.addLabels({ owner, repo, issue_number: n, labels: ['bug', 'triage'] });
    expect(once.data.map((l) => l.name)).toEqual(['bug', 'triage']);
    const twice = await bot.rest.issues.addLabels({ owner, repo, issue_number: n, labels: ['bug'] });
    expect(twice.data.map((l) => l.name)).toEqual(['bug', 'triage']);
    const listed = await bot.rest.issues.listLabelsOnIssue({ owner, repo, issue_number: n });
    expect(listed.data.map((l) => l.name)).toEqual(['bug', 'triage']);
    expect(github.counters(owner, repo, n)).toMatchObject({ labelsAdded: 2, labelRequests: 2 });
  });

  it('failNextCommentResponse applies the comment and then drops the connection', async () => {
    const issue = await bot.rest.issues.create({ owner, repo, title: 'crash' });
    github.failNextCommentResponse();
    await expect(
      bot.rest.issues.createComment({ owner, repo, issue_number: issue.data.number, body: 'lost answer' }),
    ).rejects.toThrow();
    expect(github.counters(owner, repo, issue.data.number).commentsCreated).toBe(1);
    const comments = await bot.rest.issues.listComments({ owner, repo, issue_number: issue.data.number });
    expect(comments.data.map((c) => c.body)).toEqual(['lost answer']);
  });

  it('failNextRequest answers an error without applying', async () => {
    const issue = await bot.rest.issues.create({ owner, repo, title: 'outage' });
    github.failNextRequest('createComment', 503);
    await expect(
      bot.rest.issues.createComment({ owner, repo, issue_number: issue.data.number, body: 'x' }),
    ).rejects.toMatchObject({ status: 503 });
    expect(github.counters(owner, repo, issue.data.number).commentsCreated).toBe(0);
  });
});
