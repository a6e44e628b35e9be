import type { Octokit } from '@octokit/rest';
import type { ToolExecutionOptions } from 'ai';
import { z } from 'zod';
import { defineEffectTool, effectKeyOf, stepIndex, type ToolContext } from '@chamvi/temporal';
import {
  markerAppliedInPages,
  neutralizeEffectMarkers,
  reconcileRemote,
  signedEffectMarker,
  verdict,
  type MarkerSecret,
} from '@chamvi/temporal/strategies';
import { issueCommentPages } from './issue-comment-pages.js';

/** What the comment tool needs; build it once per worker (see {@link createGitHubCommentTool}). */
export interface GitHubCommentToolConfig {
  /** An authenticated Octokit client (any `baseUrl`: github.com, GHES, the local test server). */
  readonly octokit: Octokit;
  readonly owner: string;
  readonly repo: string;
  /** Login of the account `octokit` writes as; comments by anyone else never count as applied. */
  readonly botLogin: string;
  /** HMAC secret for signed markers. Keep it in the worker (env, secret manager), never in run state. */
  readonly markerSecret: MarkerSecret;
}

const input = z.object({
  issue: z.number().int().positive().describe('Issue number'),
  body: z.string().min(1).describe('Comment text (Markdown)'),
});

/** What the tool returns, whether it posted the comment or found it. */
export interface CommentResult {
  readonly issue: number;
  readonly commentId: number;
}

/** What the comment's undo returns: the comment it deleted, or none when it was gone already. */
export interface UncommentResult {
  readonly issue: number;
  readonly deletedCommentId: number | null;
}

/**
 * The effect key: one comment per run, issue and model step. The body is left out on purpose: a
 * step redone after a crash may word the comment differently, but it is the same comment. The
 * key reveals the run id, the issue number (public where the marker lives) and the step, nothing
 * the model wrote.
 */
export function commentEffectKey(
  issue: number,
  ctx: ToolContext,
  options: Pick<ToolExecutionOptions<ToolContext>, 'messages'>,
): string {
  return `${ctx.run.runId}:github-comment:${issue}:${stepIndex(options)}`;
}

/**
 * An effect tool that comments on a GitHub issue at most once per effect key, reconciled by a
 * signed marker:
 *
 * - `execute` posts `body` (with any marker in it defused) plus `signedEffectMarker(key, secret)`;
 * - `alreadyApplied` pages through EVERY comment of the issue (`octokit.paginate`, 100 per page)
 *   and answers "applied" only for a comment by `botLogin` carrying a marker for exactly this key
 *   that verifies with the secret. A marker planted by someone else, or written by the model
 *   into the bot's own comment, never counts. A failed read is "outcome unknown"
 *   (`EffectOutcomeUnknownError`, retryable), never "not applied".
 *
 * What the marker cannot do: a comment API has no conditional write, so an attempt paused (SIGSTOP,
 * a VM freeze, a GC pause) past its lease after `alreadyApplied` found nothing and before its POST
 * lands still posts, even when another attempt has meanwhile posted the comment: two comments.
 * Crashes never cause that; only such a pause (or a partition from the effect store) does.
 *
 * Its undo (`compensate`, when the run's policy or `rollbackRun` asks for it) deletes the comment
 * found by its signed marker (the original's key, `ctx.effect.compensates`), whichever attempt
 * posted it; `alreadyCompensated` answers "undone" when no such comment is left. Deleting is
 * idempotent on GitHub (a comment already gone answers 404, taken as done), so a crash between the
 * delete and its record never deletes anything else.
 *
 * A closure factory: call it once when the worker starts and register the tool in the agent; the
 * client and the secret stay in the worker process and never enter workflow history.
 */
export function createGitHubCommentTool(config: GitHubCommentToolConfig) {
  const { octokit, owner, repo, botLogin, markerSecret } = config;
  return defineEffectTool({
    description: `Posts a comment on an issue of ${owner}/${repo}.`,
    inputSchema: input,
    effectKey: ({ issue }, ctx, options) => commentEffectKey(issue, ctx, options),
    alreadyApplied: (key, { issue }) =>
      reconcileRemote<CommentResult>(key, async () => {
        const found = await markerAppliedInPages(issueCommentPages(octokit, { owner, repo, issue }), {
          key,
          secret: markerSecret,
          author: botLogin,
        });
        return found === undefined ? verdict.notApplied() : verdict.applied({ issue, commentId: found.id });
      }),
    execute: async ({ issue, body }, options): Promise<CommentResult> => {
      const key = effectKeyOf(options);
      const text = `${neutralizeEffectMarkers(body)}\n\n${signedEffectMarker(key, markerSecret)}`;
      const created = await octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body: text });
      return { issue, commentId: created.data.id };
    },
    alreadyCompensated: (key, { issue }, ctx) =>
      reconcileRemote<UncommentResult>(key, async () => {
        const found = await markedComment(issue, originalKey(ctx));
        return found === undefined ? verdict.applied({ issue, deletedCommentId: null }) : verdict.notApplied();
      }),
    compensate: async (_result, { issue }, ctx): Promise<UncommentResult> => {
      const found = await markedComment(issue, originalKey(ctx));
      if (found === undefined) return { issue, deletedCommentId: null };
      try {
        await octokit.rest.issues.deleteComment({ owner, repo, comment_id: found.id });
      } catch (error) {
        if ((error as { status?: unknown }).status !== 404) throw error;
      }
      return { issue, deletedCommentId: found.id };
    },
  });

  function markedComment(issue: number, key: string) {
    return markerAppliedInPages(issueCommentPages(octokit, { owner, repo, issue }), {
      key,
      secret: markerSecret,
      author: botLogin,
    });
  }
}

/** The key of the effect a compensation undoes. */
function originalKey(ctx: ToolContext): string {
  const key = ctx.effect?.compensates;
  if (key === undefined) throw new TypeError('The comment undo runs only as a compensation (ctx.effect.compensates).');
  return key;
}
