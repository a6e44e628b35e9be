import { mkdir } from 'node:fs/promises';
import { z } from 'zod';
import { defaultEffectKey, defineEffectTool, effectKeyOf } from '@chamvi/temporal';
import { checkRemoteEffect, pushEffectCommit, revertEffectCommit, runGit } from '@chamvi/temporal/strategies';
import { commitFile, type GitIdentity } from './commit-file.js';

/** What the push tool needs. */
export interface GitPushToolConfig {
  /**
   * A local scratch repository for objects (created as a bare repository when missing). It holds
   * no branch of its own; any worker may use its own directory.
   */
  readonly workDir: string;
  /** The remote to push to: a URL or a path (a bare repository in the tests). */
  readonly remote: string;
  /** Branch to push to. */
  readonly branch: string;
  /** Author and committer. Default `chamvi-bot <chamvi-bot@users.noreply.local>`. */
  readonly identity?: GitIdentity;
}

const input = z.object({
  path: z
    .string()
    .min(1)
    .regex(/^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[^\0]+$/, 'a relative path inside the repository')
    .describe('File to write, relative to the repository root'),
  content: z.string().describe('The whole new content of the file'),
  message: z.string().min(1).describe('Commit message'),
});

/** What the tool returns, whether it pushed the commit or found it on the remote. */
export interface PushResult {
  readonly commit: string;
  readonly branch: string;
}

/**
 * An effect tool that commits one file and pushes it to a branch at most once per effect key,
 * reconciled by remote state:
 *
 * - every commit carries the trailer `Chamvi-Effect: <key>` ({@link pushEffectKey}: run id and a
 *   hash of the input, so no raw input appears in the trailer);
 * - `alreadyApplied` fetches the branch and looks for the trailer in its history (a commit
 *   re-created on retry has a new SHA, so the trailer, not the SHA, identifies the effect);
 * - `execute` builds the commit on the head it checked and pushes with compare-and-swap
 *   (`--force-with-lease=<ref>:<head>`); when someone moved the branch in between it re-checks
 *   and rebuilds on the new head, never forcing over the other commits. So an attempt that was
 *   paused past its lease after its check pushes late against a head that has moved (another
 *   attempt pushed this effect meanwhile): the push is refused, the re-check finds the other
 *   attempt's trailer, and nothing is pushed twice.
 *
 * Its undo (`compensate`) pushes a revert commit the same way (`revertEffectCommit`: the trailer
 * `Chamvi-Effect: <key>:compensate`, compare-and-swap), so a revert is pushed at most once too.
 */
export function createGitPushTool(config: GitPushToolConfig) {
  const identity = config.identity ?? { name: 'chamvi-bot', email: 'chamvi-bot@users.noreply.local' };
  const target = { cwd: config.workDir, remote: config.remote, branch: config.branch };
  let ready: Promise<void> | undefined;
  const ensureWorkDir = () =>
    (ready ??= (async () => {
      await mkdir(config.workDir, { recursive: true });
      await runGit(['init', '--quiet', '--bare'], { cwd: config.workDir });
    })());

  return defineEffectTool({
    description: `Writes a file and pushes the commit to ${config.branch}.`,
    inputSchema: input,
    effectKey: (call, ctx) => pushEffectKey(ctx.run.runId, call),
    alreadyApplied: async (key): Promise<PushResult | undefined> => {
      await ensureWorkDir();
      const state = await checkRemoteEffect({ ...target, key });
      return state.commit === undefined ? undefined : { commit: state.commit, branch: config.branch };
    },
    execute: async ({ path, content, message }, options): Promise<PushResult> => {
      await ensureWorkDir();
      const key = effectKeyOf(options);
      const pushed = await pushEffectCommit({
        ...target,
        key,
        makeCommit: (head) => commitFile({ cwd: config.workDir, parent: head, path, content, message, key, identity }),
      });
      return { commit: pushed.commit, branch: config.branch };
    },
    alreadyCompensated: async (key): Promise<PushResult | undefined> => {
      await ensureWorkDir();
      const state = await checkRemoteEffect({ ...target, key });
      return state.commit === undefined ? undefined : { commit: state.commit, branch: config.branch };
    },
    compensate: async (_pushed, _input, ctx): Promise<PushResult | { reverted: 'nothing' }> => {
      await ensureWorkDir();
      const effect = ctx.effect;
      if (effect?.compensates === undefined) throw new TypeError('The push undo runs only as a compensation.');
      const reverted = await revertEffectCommit({
        ...target,
        env: identityEnv(identity),
        key: effect.compensates,
        revertKey: effect.key,
      });
      return reverted.commit === undefined
        ? { reverted: 'nothing' }
        : { commit: reverted.commit, branch: config.branch };
    },
  });
}

function identityEnv(identity: GitIdentity): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: identity.name,
    GIT_AUTHOR_EMAIL: identity.email,
    GIT_COMMITTER_NAME: identity.name,
    GIT_COMMITTER_EMAIL: identity.email,
  };
}

/**
 * The effect key of a push: `<runId>:git-push:<sha256 of the canonical input>`, the default key's
 * form with a fixed tool name (`execute` reads it back with `effectKeyOf` for the trailer).
 */
export function pushEffectKey(runId: string, call: z.infer<typeof input>): string {
  return defaultEffectKey(runId, 'git-push', call);
}
