import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkRemoteEffect,
  commitWithEffectTrailer,
  EFFECT_TRAILER,
  MemoryEffectStore,
  pushEffectCommit,
  pushWithLease,
  remoteHead,
  runGit,
  withEffectTrailer,
} from '../../src/index.js';
import { commitFile } from '../../examples/git/commit-file.js';
import { createGitPushTool, pushEffectKey } from '../../examples/git/push-tool.js';
import { attempt, crashAfterEffect } from './crash-after-effect.js';

const identity = { name: 'tester', email: 'tester@example.invalid' };
const idEnv = {
  GIT_AUTHOR_NAME: identity.name,
  GIT_AUTHOR_EMAIL: identity.email,
  GIT_COMMITTER_NAME: identity.name,
  GIT_COMMITTER_EMAIL: identity.email,
};

let root: string;
let counter = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'chamvi-git-test-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A fresh bare remote, a scratch repo for our commits, and a work-tree clone for "someone else". */
async function repos() {
  const n = ++counter;
  const remote = join(root, `remote-${n}.git`);
  const work = join(root, `work-${n}.git`);
  const other = join(root, `other-${n}`);
  await runGit(['init', '--quiet', '--bare', '--initial-branch=main', remote], { cwd: root });
  await runGit(['init', '--quiet', '--bare', work], { cwd: root });
  await runGit(['init', '--quiet', '--initial-branch=main', other], { cwd: root });
  await runGit(['remote', 'add', 'origin', remote], { cwd: other });
  return { remote, work, other };
}

/** Someone else commits and pushes to main (fast-forward, from their own clone). */
async function otherPushes(other: string, text: string): Promise<string> {
  await runGit(['pull', '--quiet', 'origin', 'main'], { cwd: other, env: idEnv }).catch(() => undefined);
  await runGit(['commit', '--quiet', '--allow-empty', '-m', text], { cwd: other, env: idEnv });
  await runGit(['push', '--quiet', 'origin', 'HEAD:refs/heads/main'], { cwd: other });
  return (await runGit(['rev-parse', 'HEAD'], { cwd: other })).trim();
}

/** Every commit on the remote branch whose trailer is `key`. */
async function commitsWithKey(remote: string, key: string): Promise<string[]> {
  const out = await runGit(['log', `--format=%H %(trailers:key=${EFFECT_TRAILER},valueonly,separator=%x1f)`, 'main'], {
    cwd: remote,
  });
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .filter((l) => l.slice(41).split('\x1f').includes(key))
    .map((l) => l.slice(0, 40));
}

describe('git remote state: trailer + compare-and-swap push', () => {
  it('worker crash after the push: the retry finds the trailer on the remote and pushes nothing (one commit)', async () => {
    const { remote, work, other } = await repos();
    await otherPushes(other, 'initial');
    const store = new MemoryEffectStore();
    const tool = crashAfterEffect(createGitPushTool({ workDir: work, remote, branch: 'main', identity }));
    const input = { path: 'docs/notes.md', content: 'hello\n', message: 'Add notes' };

    await expect(attempt(tool, input, 'run-git-1', store)).rejects.toThrow('simulated worker crash');
    const retry = await attempt(tool, input, 'run-git-1', store);
    expect(retry.outcome).toBe('reconciled');

    const key = pushEffectKey('run-git-1', input);
    const commits = await commitsWithKey(remote, key);
    expect(commits).toHaveLength(1);
    expect(retry.result).toEqual({ commit: commits[0], branch: 'main' });
    expect(await runGit(['show', 'main:docs/notes.md'], { cwd: remote })).toBe('hello\n');
    expect(await runGit(['rev-list', '--count', 'main'], { cwd: remote })).toBe('2\n');
  });

  it('creates the branch when it does not exist yet (lease: must not exist)', async () => {
    const { remote, work } = await repos();
    const tool = createGitPushTool({ workDir: work, remote, branch: 'main', identity });
    const done = await attempt(
      tool,
      { path: 'a.txt', content: 'a', message: 'first' },
      'run-git-2',
      new MemoryEffectStore(),
    );
    expect(done.outcome).toBe('executed');
    expect(await remoteHead({ cwd: work, remote, branch: 'main' })).toBe(done.result.commit);
  });

  it('a commit re-created on retry has a new SHA; reconciliation matches the trailer, not the SHA', async () => {
    const { remote, work, other } = await repos();
    const base = await otherPushes(other, 'base');
    const key = 'run-git-3:git-push:abc';
    const target = { cwd: work, remote, branch: 'main' };
    await runGit(['fetch', '--quiet', remote, 'main'], { cwd: work });
    const first = await commitFile({ cwd: work, parent: base, path: 'f', content: '1', message: 'm', key, identity });
    expect(await pushWithLease({ ...target, commit: first, expected: base })).toBe('pushed');
    const retryIdentity = { ...identity, name: 'another worker' }; // anything that changes the SHA
    const again = await commitFile({
      cwd: work,
      parent: base,
      path: 'f',
      content: '1',
      message: 'm',
      key,
      identity: retryIdentity,
    });
    expect(again).not.toBe(first);

    let built = 0;
    const result = await pushEffectCommit({ ...target, key, makeCommit: async () => (built++, again) });
    expect(result).toMatchObject({ status: 'already-applied', commit: first });
    expect(built).toBe(0);
    expect(await commitsWithKey(remote, key)).toEqual([first]);
  });

  it('a ref moved by someone else between check and push is re-checked and built upon, never forced over', async () => {
    const { remote, work, other } = await repos();
    await otherPushes(other, 'base');
    const key = 'run-git-4:git-push:def';
    let theirs = '';
    let builds = 0;
    const result = await pushEffectCommit({
      cwd: work,
      remote,
      branch: 'main',
      key,
      makeCommit: async (head) => {
        builds += 1;
        if (builds === 1) theirs = await otherPushes(other, 'raced in'); // moves main after our check
        return commitFile({
          cwd: work,
          parent: head,
          path: 'x',
          content: String(builds),
          message: 'ours',
          key,
          identity,
        });
      },
    });
    expect(result.status).toBe('pushed');
    expect(result.rounds).toBe(2);
    const history = (await runGit(['rev-list', 'main'], { cwd: remote })).trim().split('\n');
    expect(history[0]).toBe(result.commit);
    expect(history).toContain(theirs);
    expect(await commitsWithKey(remote, key)).toEqual([result.commit]);
  });

  it('pushWithLease with a stale expected value reports ref-moved and leaves the remote alone', async () => {
    const { remote, work, other } = await repos();
    const base = await otherPushes(other, 'base');
    const moved = await otherPushes(other, 'moved');
    await runGit(['fetch', '--quiet', remote, 'main'], { cwd: work });
    const ours = await commitFile({
      cwd: work,
      parent: base,
      path: 'y',
      content: 'y',
      message: 'm',
      key: 'k',
      identity,
    });
    await expect(pushWithLease({ cwd: work, remote, branch: 'main', commit: ours, expected: base })).resolves.toBe(
      'ref-moved',
    );
    expect(await remoteHead({ cwd: work, remote, branch: 'main' })).toBe(moved);
    // and refuses to push a commit that does not descend from the expected head
    await expect(pushWithLease({ cwd: work, remote, branch: 'main', commit: ours, expected: moved })).rejects.toThrow(
      TypeError,
    );
  });

  it('keys match exactly in trailers (a prefix is not our key) and survive git verbatim', async () => {
    const { other } = await repos();
    await otherPushes(other, 'base');
    await commitWithEffectTrailer({ cwd: other, env: idEnv, key: 'run:t:10', message: 'x', allowEmpty: true });
    await runGit(['push', '--quiet', 'origin', 'HEAD:refs/heads/main'], { cwd: other });
    const target = { cwd: other, remote: 'origin', branch: 'main' };
    expect((await checkRemoteEffect({ ...target, key: 'run:t:1' })).commit).toBeUndefined();
    expect((await checkRemoteEffect({ ...target, key: 'run:t:10' })).commit).toBeDefined();
    expect(withEffectTrailer('msg\n', 'a:b')).toBe('msg\n\nChamvi-Effect: a:b\n');
    expect(() => withEffectTrailer('m', 'a\nChamvi-Effect: b')).toThrow(TypeError);
  });
});
