import { createHash } from 'node:crypto';
import { GitCommandError, RemoteRefContendedError } from '../errors/errors.js';
import { runGit, runGitRaw, type GitOptions } from './git-exec.js';

/** The commit trailer that carries an effect key: `Chamvi-Effect: <key>`. @public */
export const EFFECT_TRAILER = 'Chamvi-Effect';

/** A remote branch, as git sees it from a local repository. @public */
export interface RemoteBranch extends GitOptions {
  /** A remote name (`origin`) or URL/path. */
  readonly remote: string;
  /** Branch name without `refs/heads/`. */
  readonly branch: string;
}

/** What the remote branch looks like with respect to one effect key. @public */
export interface RemoteEffectState {
  /** The branch's commit as checked, or `undefined` when the branch does not exist. */
  readonly head: string | undefined;
  /** The commit reachable from `head` whose `Chamvi-Effect` trailer is the key, if any. */
  readonly commit: string | undefined;
}

/**
 * `message` with the trailer `Chamvi-Effect: <key>` appended as its own trailer paragraph.
 * @throws TypeError for a key git could not keep verbatim in a trailer (see {@link assertTrailerKey}).
 */
export function withEffectTrailer(message: string, key: string): string {
  assertTrailerKey(key);
  return `${message.replace(/\s+$/, '')}\n\n${EFFECT_TRAILER}: ${key}\n`;
}

/**
 * Checks that a key survives as a trailer value exactly: non-empty, no control characters (a
 * newline would end or fold the trailer) and no surrounding whitespace (git trims it). The
 * default effect key always passes.
 */
export function assertTrailerKey(key: string): void {
  // eslint-disable-next-line no-control-regex
  if (typeof key !== 'string' || key === '' || /[\u0000-\u001f\u007f]/.test(key) || key.trim() !== key) {
    throw new TypeError(
      'An effect key used as a commit trailer must be non-empty, without control characters or surrounding whitespace.',
    );
  }
}

/**
 * Commits what is staged in the work tree at `cwd` on its current branch, with the effect key as
 * trailer (`git commit --trailer`). Returns the new commit's SHA. `allowEmpty` commits even when
 * nothing is staged.
 * @public
 */
export async function commitWithEffectTrailer(
  options: GitOptions & { readonly key: string; readonly message: string; readonly allowEmpty?: boolean },
): Promise<string> {
  assertTrailerKey(options.key);
  await runGit(
    [
      'commit',
      '--quiet',
      ...(options.allowEmpty ? ['--allow-empty'] : []),
      '-m',
      options.message,
      '--trailer',
      `${EFFECT_TRAILER}: ${options.key}`,
    ],
    options,
  );
  return (await runGit(['rev-parse', 'HEAD'], options)).trim();
}

/**
 * Creates a commit object from a tree (plumbing `git commit-tree`, no work tree or branch touched)
 * with the effect trailer. `parents` is empty for a root commit. Returns its SHA.
 * @public
 */
export async function commitTreeWithEffect(
  options: GitOptions & {
    readonly tree: string;
    readonly parents: readonly string[];
    readonly message: string;
    readonly key: string;
  },
): Promise<string> {
  const message = withEffectTrailer(options.message, options.key);
  const parents = options.parents.flatMap((p) => ['-p', p]);
  return (await runGit(['commit-tree', options.tree, ...parents, '-m', message], options)).trim();
}

/** The effect keys in the `Chamvi-Effect` trailers of one commit. */
export async function effectTrailersOf(options: GitOptions & { readonly commit: string }): Promise<string[]> {
  const out = await runGit(
    ['log', '-1', `--format=%(trailers:key=${EFFECT_TRAILER},valueonly,separator=%x1f)`, options.commit, '--'],
    options,
  );
  return out
    .replace(/\n+$/, '')
    .split('\x1f')
    .filter((v) => v !== '');
}

/** The remote branch's current commit (`git ls-remote`), or `undefined` when it does not exist. */
export async function remoteHead(target: RemoteBranch): Promise<string | undefined> {
  const out = await runGit(['ls-remote', '--heads', target.remote, `refs/heads/${target.branch}`], target);
  const line = out.split('\n').find((l) => l.endsWith(`\trefs/heads/${target.branch}`));
  return line?.split('\t')[0];
}

/**
 * Looks on the remote branch for a commit carrying the effect key as its `Chamvi-Effect` trailer:
 * fetches the branch (into a private ref, `refs/chamvi/fetched/...`) and reads the trailers of its
 * whole history (`git log --format=%(trailers)`). Matches the trailer, never a SHA: a commit
 * re-created on retry has a new SHA but the same trailer. Keys are compared exactly.
 * @public
 */
export async function checkRemoteEffect(target: RemoteBranch & { readonly key: string }): Promise<RemoteEffectState> {
  assertTrailerKey(target.key);
  const listed = await remoteHead(target);
  if (listed === undefined) return { head: undefined, commit: undefined };
  const local = privateRef(target);
  await runGit(['fetch', '--quiet', '--no-tags', target.remote, `+refs/heads/${target.branch}:${local}`], target);
  const head = (await runGit(['rev-parse', '--verify', `${local}^{commit}`], target)).trim();
  const log = await runGit(
    ['log', `--format=%H%x1f%(trailers:key=${EFFECT_TRAILER},valueonly,separator=%x1f)%x1e`, head, '--'],
    target,
  );
  for (const entry of log.split('\x1e')) {
    const [sha, ...values] = entry.replace(/^\n+|\n+$/g, '').split('\x1f');
    if (sha && values.map((v) => v.replace(/\n+$/, '')).includes(target.key)) return { head, commit: sha };
  }
  return { head, commit: undefined };
}

/** How a compare-and-swap push ended. @public */
export type LeasePushResult = 'pushed' | 'ref-moved';

/**
 * Pushes `commit` to the remote branch only if the branch is still at `expected` (`undefined`:
 * only if it does not exist yet): `git push --force-with-lease=refs/heads/<branch>:<expected>`.
 * Resolves `'ref-moved'` when the lease failed (someone else moved the ref; nothing was pushed).
 * Refuses a commit that does not descend from `expected`, so a push never drops other commits.
 *
 * The compare is the remote's own: git checks the lease against the ref the remote advertised,
 * and the remote updates the ref only if it still holds that value when the update lands (a ref
 * transaction with the old value). So a push that stalls anywhere (a paused process, a slow
 * network, a hook) while another push moves the ref is refused by the remote, reported as
 * `[remote rejected] (... is at <sha> but expected <sha>)`, which also resolves `'ref-moved'`.
 * The compare sees values, not history: a ref moved away and force-pushed back to `expected`
 * (A-B-A) lets the late push through.
 * @throws GitCommandError for any other failure (network, hooks, permissions).
 * @public
 */
export async function pushWithLease(
  target: RemoteBranch & { readonly commit: string; readonly expected: string | undefined },
): Promise<LeasePushResult> {
  const ref = `refs/heads/${target.branch}`;
  if (target.expected !== undefined) {
    const ancestor = await runGitRaw(['merge-base', '--is-ancestor', target.expected, target.commit], target);
    if (ancestor.exitCode !== 0)
      throw new TypeError(`pushWithLease: ${target.commit} does not descend from ${target.expected}; build it on top.`);
  }
  const args = [
    'push',
    '--porcelain',
    `--force-with-lease=${ref}:${target.expected ?? ''}`,
    target.remote,
    `${target.commit}:${ref}`,
  ];
  const out = await runGitRaw(args, target);
  if (out.exitCode === 0) return 'pushed';
  const rejected = out.stdout.split('\n').find((l) => l.startsWith('!') && l.includes(`:${ref}`));
  if (rejected !== undefined && /stale info|fetch first|non-fast-forward|already exists/.test(rejected))
    return 'ref-moved';
  // The ref moved after the remote advertised it: the remote's own old-value check refused the update.
  if (rejected !== undefined && /remote rejected/.test(rejected) && movedUnderneath(ref, out.stderr))
    return 'ref-moved';
  throw new GitCommandError({ args, exitCode: out.exitCode, stderr: `${out.stderr}\n${out.stdout}` });
}

/** How {@link pushEffectCommit} ended. @public */
export interface EffectPushResult {
  /** `pushed`: this call pushed the commit; `already-applied`: the remote already had the trailer. */
  readonly status: 'pushed' | 'already-applied';
  /** The commit on the remote that carries the effect key. */
  readonly commit: string;
  /** Check-and-push rounds it took. */
  readonly rounds: number;
}

/**
 * Applies a git push at most once per effect key, with remote state as the reconciliation:
 *
 * 1. check: {@link checkRemoteEffect}; a commit with the trailer means already applied (whoever
 *    pushed it, e.g. an earlier attempt that crashed after its push);
 * 2. build: `makeCommit(head)` creates the commit on top of the checked head (`undefined` for a
 *    new branch); it must carry the trailer (checked);
 * 3. push with compare-and-swap: {@link pushWithLease} with `expected = head`. When the ref moved
 *    in between, go back to 1: re-check, rebuild on the new head, never force over it.
 *
 * After `maxRounds` (default 5) lost races it throws {@link RemoteRefContendedError} (retryable).
 *
 * Why a paused attempt cannot push twice: its push carries the head it checked. If it was paused
 * past its lease between step 1 and 3 while another attempt pushed this effect, the branch has
 * moved, the remote refuses the late push, and round 2's check finds the other attempt's trailer
 * (`already-applied`). The one hole is A-B-A: someone force-pushes the branch back to exactly the
 * head the paused attempt checked, dropping the other attempt's commit; then the late push lands.
 * The claim's fence is not needed: the expected head is the fence.
 * @public
 */
export async function pushEffectCommit(
  target: RemoteBranch & {
    readonly key: string;
    readonly makeCommit: (head: string | undefined) => Promise<string>;
    readonly maxRounds?: number;
  },
): Promise<EffectPushResult> {
  const maxRounds = target.maxRounds ?? 5;
  for (let round = 1; round <= maxRounds; round++) {
    const state = await checkRemoteEffect(target);
    if (state.commit !== undefined) return { status: 'already-applied', commit: state.commit, rounds: round };
    const commit = await target.makeCommit(state.head);
    const keys = await effectTrailersOf({ ...target, commit });
    if (!keys.includes(target.key))
      throw new TypeError(
        `pushEffectCommit: makeCommit returned ${commit}, which lacks the trailer "${EFFECT_TRAILER}: <key>"; use withEffectTrailer or commitTreeWithEffect.`,
      );
    const pushed = await pushWithLease({ ...target, commit, expected: state.head });
    if (pushed === 'pushed') return { status: 'pushed', commit, rounds: round };
  }
  throw new RemoteRefContendedError({ ref: `${target.remote} refs/heads/${target.branch}`, attempts: maxRounds });
}

/** Whether the remote's error output says `ref` was not at the value the push expected. */
function movedUnderneath(ref: string, stderr: string): boolean {
  return stderr
    .split('\n')
    .some(
      (line) =>
        line.includes(ref) &&
        (/is at [0-9a-f]{7,} but expected [0-9a-f]{7,}/.test(line) || /reference already exists/.test(line)),
    );
}

function privateRef(target: RemoteBranch): string {
  const remote = createHash('sha256').update(target.remote).digest('hex').slice(0, 16);
  return `refs/chamvi/fetched/${remote}/${target.branch}`;
}
