import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { runAttempt, startPausedAttempt, type PausedAttempt } from './paused-attempt.js';

const owner = 'acme';
const repo = 'widgets';

// The documented limit of marker reconciliation, shown on the real tool and a real HTTP server:
// a comment API has no conditional write, so nothing refuses a POST that arrives late.
describe('GitHub comment (signed marker): an attempt paused past its lease between its last check and its POST', () => {
  const github = new LocalGitHubServer({ tokens: { 'bot-token': 'chamvi-bot' } });
  let dir: string;
  let paused: PausedAttempt | undefined;
  beforeAll(async () => {
    await github.start();
    dir = await mkdtemp(join(tmpdir(), 'chamvi-github-paused-'));
  });
  afterEach(() => paused?.kill());
  afterAll(async () => {
    await github.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('still posts a second comment after another attempt posted: no remote conditional write exists to refuse it', async () => {
    const issue = github.tracker.createIssue(owner, repo, { title: 'paused', login: 'alice' }).number;
    const setup = {
      spec: {
        kind: 'github' as const,
        baseUrl: github.url,
        token: 'bot-token',
        owner,
        repo,
        botLogin: 'chamvi-bot',
        secret: 'marker-secret',
      },
      storePath: join(dir, 'store.db'),
      leaseMs: 400,
      runId: 'run-github-paused',
      toolName: 'comment',
      input: { issue, body: 'Thanks for the report' },
    };
    // A's alreadyApplied found no marker; A is stopped right before its POST.
    paused = await startPausedAttempt(setup);
    const b = await runAttempt(setup);
    expect(b.error).toBeUndefined();
    expect(b).toMatchObject({ ok: true, outcome: 'executed' });
    expect(github.counters(owner, repo, issue).commentsCreated).toBe(1);

    const a = await paused.resume();
    expect(a.writes).toEqual([{ status: 201 }]);
    expect(a.fence).toBeLessThan(b.fence!);
    expect(github.counters(owner, repo, issue).commentsCreated).toBe(2);
    // Both carry the same signed marker: a later retry still reconciles, it just cannot undo the second one.
    const bodies = (github.tracker.listComments(owner, repo, issue) ?? []).map((c) => c.body);
    expect(new Set(bodies.map((body) => body?.split('\n').pop())).size).toBe(1);
  }, 60_000);
});
