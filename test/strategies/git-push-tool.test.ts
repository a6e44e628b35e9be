import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import {
  checkRemoteEffect,
  commitWithEffectTrailer,
  EFFECT_TRAILER,
  pushEffectCommit,
  pushWithLease,
  runGit,
} from '../../src/strategies/index.js';
import { effectTrailersOf, remoteHead, withEffectTrailer } from '../../src/strategies/git-remote-state.js';
import { commitFile } from '../../examples/git/commit-file.js';
import { createGitPushTool, pushEffectKey } from '../../examples/git/push-tool.js';
import { attempt, crashAfterEffect } from './crash-after-effect.js';
import { runAttempt, startPausedAttempt, type PausedAttempt } from './paused-attempt.js';

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

/** Every later update of a ref of `remote` is appended to `<remote>/updates.log` as `old new ref`. */
async function logRefUpdates(remote: string): Promise<() => Promise<string[]>> {
  const hook = join(remote, 'hooks', 'post-receive');
  await writeFile(hook, `#!/bin/sh\ncat >> "$GIT_DIR/updates.log"\n`);
  await chmod(hook, 0o755);
  return async () =>
    (await readFile(join(remote, 'updates.log'), 'utf8').catch(() => '')).split('\n').filter((l) => l.trim() !== '');
}

describe('git: an attempt paused past its lease between its check and its push', () => {
  const LEASE = 400;
  let paused: PausedAttempt | undefined;
  afterAll(() => paused?.kill());

  it("pushes late against the head it checked: the remote refuses it, the re-check finds the other attempt's trailer, one push of the effect", async () => {
    const { remote, other } = await repos();
    await otherPushes(other, 'base');
    const updates = await logRefUpdates(remote);
    const input = { path: 'docs/paused.md', content: 'once\n', message: 'Add paused notes' };
    const setup = {
      spec: {
        kind: 'git' as const,
        workDir: join(root, `paused-a-${counter}.git`),
        remote,
        branch: 'main',
        committer: 'worker-a',
      },
      storePath: join(root, `paused-${counter}.db`),
      leaseMs: LEASE,
      runId: 'run-git-paused',
      toolName: 'git-push',
      input,
    };
    const key = pushEffectKey('run-git-paused', input);

    // A checked the remote (no trailer), built its commit on the head it saw, and is stopped in `git push`.
    paused = await startPausedAttempt(setup);
    // B takes the key over once A's lease has run out, finds nothing remotely, and pushes.
    const workB = join(root, `paused-b-${counter}.git`);
    const b = await runAttempt({ ...setup, spec: { ...setup.spec, workDir: workB, committer: 'worker-b' } });
    expect(b.error).toBeUndefined();
    expect(b).toMatchObject({ ok: true, outcome: 'executed' });
    const pushedByB = (b.result as { commit: string }).commit;
    expect(await commitsWithKey(remote, key)).toEqual([pushedByB]);

    const a = await paused.resume();
    expect(paused.pushLog()).toBe('held\nreleased\n'); // A's push really ran, late, and only once
    expect(a.ok).toBe(true);
    expect((a.result as { commit: string }).commit).toBe(pushedByB);
    expect(a.fence).toBeLessThan(b.fence!);
    // The remote: B's commit is still there, and the effect was pushed exactly once.
    expect(await commitsWithKey(remote, key)).toEqual([pushedByB]);
    const withKey = [];
    for (const line of await updates()) {
      const [, next] = line.split(' ');
      if ((await effectTrailersOf({ cwd: remote, commit: next! })).includes(key)) withKey.push(next);
    }
    expect(withKey).toEqual([pushedByB]);
  }, 60_000);
});

describe('pushWithLease: a push stalled inside the remote while another push lands', () => {
  /** A pre-receive hook that holds the first push after `arm()` until `release()`. */
  async function holdFirstPush(remote: string) {
    const hook = join(remote, 'hooks', 'pre-receive');
    await writeFile(
      hook,
      [
        '#!/bin/sh',
        'if mv "$GIT_DIR/hold" "$GIT_DIR/held" 2>/dev/null; then',
        '  while [ ! -e "$GIT_DIR/release" ]; do sleep 0.01; done',
        'fi',
        'cat > /dev/null',
        '',
      ].join('\n'),
    );
    await chmod(hook, 0o755);
    return {
      arm: () => writeFile(join(remote, 'hold'), ''),
      held: async () => {
        while (!existsSync(join(remote, 'held'))) await new Promise((r) => setTimeout(r, 10));
      },
      release: () => writeFile(join(remote, 'release'), ''),
    };
  }

  it.each([
    ['an existing branch (lease: still at the checked head)', true],
    ['a new branch (lease: must not exist)', false],
  ])(
    "on %s, the remote's own old-value check refuses the stalled push: ref-moved, the other push stays",
    async (_what, existing) => {
      const { remote, work, other } = await repos();
      const base = existing ? await otherPushes(other, 'base') : undefined;
      if (base !== undefined) await runGit(['fetch', '--quiet', remote, 'main'], { cwd: work });
      const commit = (name: string) =>
        commitFile({ cwd: work, parent: base, path: name, content: name, message: name, key: `k-${name}`, identity });
      const [stalled, landing] = [await commit('a'), await commit('b')];
      const gate = await holdFirstPush(remote);
      const target = { cwd: work, remote, branch: 'main' };

      await gate.arm();
      const late = pushWithLease({ ...target, commit: stalled, expected: base });
      await gate.held(); // the lease was checked against the advertised ref; the update waits in the hook
      await expect(pushWithLease({ ...target, commit: landing, expected: base })).resolves.toBe('pushed');
      await gate.release();

      await expect(late).resolves.toBe('ref-moved');
      expect(await remoteHead(target)).toBe(landing);
    },
  );
});
