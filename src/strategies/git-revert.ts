import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RemoteRefContendedError } from '../errors/errors.js';
import { runGit } from './git-exec.js';
import { checkRemoteEffect, commitTreeWithEffect, pushWithLease, type RemoteBranch } from './git-remote-state.js';

/** How {@link revertEffectCommit} ended. @beta */
export interface EffectRevertResult {
  /**
   * `reverted`: this call pushed the revert; `already-reverted`: the branch already has a commit
   * with the revert's trailer (an earlier attempt pushed it); `not-found`: no commit on the branch
   * carries the original's key, so there is nothing to revert.
   */
  readonly status: 'reverted' | 'already-reverted' | 'not-found';
  /** The revert commit on the remote (absent for `not-found`). */
  readonly commit?: string;
  /** Check-and-push rounds it took. */
  readonly rounds: number;
}

/**
 * Undoes a pushed effect commit at most once per revert key, the way `pushEffectCommit`
 * applied it: a revert commit carrying `Chamvi-Effect: <revertKey>`, pushed with compare-and-swap.
 *
 * 1. check: a commit with the revert's trailer on the branch means already reverted (whichever
 *    attempt pushed it); no commit with the original's trailer means nothing to revert;
 * 2. build: the original commit's change applied in reverse onto the checked head (a private
 *    index; no work tree or branch is touched), committed with the revert's trailer;
 * 3. push with `--force-with-lease` expecting the checked head; when the branch moved in between,
 *    back to 1, never forcing over other commits.
 *
 * In a compensation, `key` is `ctx.effect.compensates` and `revertKey` is `ctx.effect.key`. The
 * guarantee is the push's: a crash or a paused attempt never pushes two reverts, except for the
 * A-B-A hole of {@link pushWithLease}. A later commit that changed the same lines makes the reverse
 * change not apply: that throws `GitCommandError` (a conflict no retry fixes; the compensation is
 * then reported failed and the branch is left as it is). `env` sets the committer (`GIT_AUTHOR_*`,
 * `GIT_COMMITTER_*`).
 *
 * @throws RemoteRefContendedError after `maxRounds` (default 5) lost races.
 * @beta
 */
export async function revertEffectCommit(
  target: RemoteBranch & { readonly key: string; readonly revertKey: string; readonly maxRounds?: number },
): Promise<EffectRevertResult> {
  const maxRounds = target.maxRounds ?? 5;
  for (let round = 1; round <= maxRounds; round++) {
    const reverted = await checkRemoteEffect({ ...target, key: target.revertKey });
    if (reverted.commit !== undefined) return { status: 'already-reverted', commit: reverted.commit, rounds: round };
    const original = await checkRemoteEffect({ ...target, key: target.key });
    const head = original.head;
    if (original.commit === undefined || head === undefined) return { status: 'not-found', rounds: round };
    const commit = await revertCommit(target, original.commit, head);
    const pushed = await pushWithLease({ ...target, commit, expected: head });
    if (pushed === 'pushed') return { status: 'reverted', commit, rounds: round };
  }
  throw new RemoteRefContendedError({ ref: `${target.remote} refs/heads/${target.branch}`, attempts: maxRounds });
}

/** A commit on `head` that undoes `original`'s change, with the revert key as its trailer. */
async function revertCommit(
  target: RemoteBranch & { readonly revertKey: string },
  original: string,
  head: string,
): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'chamvi-revert-'));
  try {
    const env = { ...target.env, GIT_INDEX_FILE: join(scratch, 'index') };
    const git = { cwd: target.cwd, env };
    // --root: a root commit's change is everything it added.
    const patch = await runGit(
      ['diff-tree', '-p', '--binary', '--full-index', '--no-commit-id', '--root', original, '--'],
      git,
    );
    await runGit(['read-tree', head], git);
    if (patch.trim() !== '') {
      const patchFile = join(scratch, 'change.patch');
      await writeFile(patchFile, patch);
      await runGit(['apply', '--cached', '--reverse', '--whitespace=nowarn', patchFile], git);
    }
    const tree = (await runGit(['write-tree'], git)).trim();
    const subject = (await runGit(['log', '-1', '--format=%s', original, '--'], git)).trim();
    return await commitTreeWithEffect({
      ...git,
      tree,
      parents: [head],
      message: `Revert "${subject}"\n\nThis reverts commit ${original}.`,
      key: target.revertKey,
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
