// The git push's undo against real bare remotes: a revert commit with the compensation's trailer,
// pushed with compare-and-swap, at most once.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolContext } from '../../src/context/tool-context.js';
import { applyCompensation, compensationKey } from '../../src/effects/compensation.js';
import type { EffectTool } from '../../src/effects/define-effect-tool.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { EFFECT_TRAILER, revertEffectCommit, runGit } from '../../src/strategies/index.js';
import { createGitPushTool } from '../../examples/git/push-tool.js';

const identity = { name: 'tester', email: 'tester@example.invalid' };
const idEnv = {
  GIT_AUTHOR_NAME: identity.name,
  GIT_AUTHOR_EMAIL: identity.email,
  GIT_COMMITTER_NAME: identity.name,
  GIT_COMMITTER_EMAIL: identity.email,
};
const quiet = { warn: () => undefined };

let root: string;
let counter = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'chamvi-git-revert-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A bare remote with one commit on main, a scratch repo for our commits, and a clone for someone else. */
async function repos() {
  const n = ++counter;
  const remote = join(root, `remote-${n}.git`);
  const work = join(root, `work-${n}.git`);
  const other = join(root, `other-${n}`);
  await runGit(['init', '--quiet', '--bare', '--initial-branch=main', remote], { cwd: root });
  await runGit(['init', '--quiet', '--initial-branch=main', other], { cwd: root });
  await runGit(['remote', 'add', 'origin', remote], { cwd: other });
  await otherCommits(other, 'README.md', 'hello\n');
  return { remote, work, other };
}

/** Someone else writes a file, commits and pushes to main from their clone. */
async function otherCommits(other: string, path: string, content: string): Promise<void> {
  await runGit(['pull', '--quiet', 'origin', 'main'], { cwd: other, env: idEnv }).catch(() => undefined);
  await writeFile(join(other, path), content);
  await runGit(['add', path], { cwd: other });
  await runGit(['commit', '--quiet', '-m', `write ${path}`], { cwd: other, env: idEnv });
  await runGit(['push', '--quiet', 'origin', 'HEAD:refs/heads/main'], { cwd: other });
}

async function commitsWithKey(remote: string, key: string): Promise<number> {
  const out = await runGit(['log', `--format=%(trailers:key=${EFFECT_TRAILER},valueonly,separator=%x1f)`, 'main'], {
    cwd: remote,
  });
  return out.split('\n').filter((l) => l.split('\x1f').includes(key)).length;
}

/** Pushes `input` through the protocol with the push tool; `undo()` compensates it. */
async function pushed(remote: string, work: string, input: { path: string; content: string; message: string }) {
  const tool = createGitPushTool({ workDir: work, remote, branch: 'main', identity }) as unknown as EffectTool;
  const store = new MemoryEffectStore();
  const ctx = createToolContext({ runId: `run-${++counter}`, agent: 'pusher' });
  const { report } = await applyEffect(
    { tool, toolName: 'push', input, ctx, options: { toolCallId: 'c1', messages: [], context: ctx } },
    { store, logger: quiet },
  );
  const undo = () =>
    applyCompensation(
      { tool, toolName: 'push', input, ctx, key: report.key, toolCallId: 'c1' },
      { store, logger: quiet },
    );
  return { key: report.key, undo };
}

describe('the git push undo: a revert commit pushed with compare-and-swap', () => {
  it('reverts the pushed change on top of later commits by others, keeping theirs', async () => {
    const { remote, work, other } = await repos();
    const { key, undo } = await pushed(remote, work, { path: 'notes.md', content: 'ours\n', message: 'Add notes' });
    await otherCommits(other, 'theirs.md', 'theirs\n');
    const { report } = await undo();
    expect(report.outcome).toBe('executed');
    const files = (await runGit(['ls-tree', '--name-only', 'main'], { cwd: remote })).split('\n').filter(Boolean);
    expect(files.sort()).toEqual(['README.md', 'theirs.md']);
    expect(await commitsWithKey(remote, compensationKey(key))).toBe(1);
    expect(await runGit(['log', '-1', '--format=%s', 'main'], { cwd: remote })).toBe('Revert "Add notes"\n');
  });

  it('a crash after the revert was pushed and before its record pushes no second revert (alreadyCompensated)', async () => {
    const { remote, work } = await repos();
    const { key, undo } = await pushed(remote, work, { path: 'a.txt', content: 'a\n', message: 'Add a' });
    // The attempt that crashed: its revert reached the remote, its record did not.
    await revertEffectCommit({ cwd: work, remote, branch: 'main', env: idEnv, key, revertKey: compensationKey(key) });
    const retry = await undo();
    expect(retry.report.outcome).toBe('reconciled');
    expect(await commitsWithKey(remote, compensationKey(key))).toBe(1);
    expect(await runGit(['rev-list', '--count', 'main'], { cwd: remote })).toBe('3\n');
  });

  it('a second revert call finds the first (already-reverted), and a key no commit carries has nothing to revert', async () => {
    const { remote, work } = await repos();
    const { key } = await pushed(remote, work, { path: 'b.txt', content: 'b\n', message: 'Add b' });
    const target = { cwd: work, remote, branch: 'main', env: idEnv, key, revertKey: compensationKey(key) };
    expect((await revertEffectCommit(target)).status).toBe('reverted');
    expect((await revertEffectCommit(target)).status).toBe('already-reverted');
    expect(
      (await revertEffectCommit({ ...target, key: 'run-x:push:none', revertKey: 'run-x:push:none:compensate' })).status,
    ).toBe('not-found');
    expect(await commitsWithKey(remote, compensationKey(key))).toBe(1);
  });

  it('a later change to the same lines makes the revert fail loudly and leaves the branch as it is', async () => {
    const { remote, work, other } = await repos();
    const { undo } = await pushed(remote, work, { path: 'README.md', content: 'ours\n', message: 'Rewrite README' });
    await otherCommits(other, 'README.md', 'theirs\n');
    const before = await runGit(['rev-parse', 'main'], { cwd: remote });
    await expect(undo()).rejects.toMatchObject({ name: 'GitCommandError' });
    expect(await runGit(['rev-parse', 'main'], { cwd: remote })).toBe(before);
  });
});
