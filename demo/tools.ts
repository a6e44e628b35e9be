import type { Octokit } from '@octokit/rest';
import { z } from 'zod';
import { defineEffectTool, type EffectTool, type ToolContext } from '@chamvi/temporal';
import {
  defineSetEffectTool,
  markerAppliedInPages,
  neutralizeEffectMarkers,
  reconcileRemote,
  signedEffectMarker,
  verdict,
  type MarkerSecret,
} from '@chamvi/temporal/strategies';

/** Where the demo's comment tool writes, and how it recognizes its own comments. */
export interface DemoCommentConfig {
  readonly octokit: Octokit;
  readonly owner: string;
  readonly repo: string;
  /** Only comments by this login count as applied. */
  readonly botLogin: string;
  /** HMAC secret of the signed markers (a third party cannot forge one). */
  readonly markerSecret: MarkerSecret;
}

interface CommentInput {
  issue: number;
  body: string;
}
interface CommentResult {
  issue: number;
  commentId: number;
}

/** Every comment of an issue, page by page (100 per page), never a lagging search index. */
async function* commentPages(octokit: Octokit, owner: string, repo: string, issue: number) {
  const pages = octokit.paginate.iterator(octokit.rest.issues.listComments, {
    owner,
    repo,
    issue_number: issue,
    per_page: 100,
  });
  for await (const page of pages) yield page.data;
}

/** The spec's key: one comment per run and issue, whatever the body says. */
export const commentKey = (issue: number, ctx: ToolContext): string => `${ctx.run.runId}:comment:${issue}`;

/**
 * The spec's responder comment tool: one comment per run and issue, a signed marker in the body,
 * and `alreadyApplied` paging through every comment of the issue for a marker by the bot that names
 * exactly this key. A failed read is "outcome unknown" (retryable), never "not applied".
 */
export function createDemoCommentTool(config: DemoCommentConfig): EffectTool<CommentInput, CommentResult> {
  const { octokit, owner, repo, botLogin, markerSecret } = config;
  return defineEffectTool({
    description: `Posts a comment on an issue of ${owner}/${repo}.`,
    inputSchema: z.object({
      issue: z.number().int().positive().describe('Issue number'),
      body: z.string().min(1).describe('Comment text (Markdown)'),
    }),
    effectKey: ({ issue }, ctx) => commentKey(issue, ctx),
    alreadyApplied: (key, { issue }) =>
      reconcileRemote<CommentResult>(key, async () => {
        const pages = commentPages(octokit, owner, repo, issue);
        const found = await markerAppliedInPages(pages, { key, secret: markerSecret, author: botLogin });
        return found === undefined ? verdict.notApplied() : verdict.applied({ issue, commentId: found.id });
      }),
    execute: async ({ issue, body }, { context }) => {
      const marker = signedEffectMarker(commentKey(issue, context), markerSecret);
      const { data } = await octokit.rest.issues.createComment({
        owner,
        repo,
        issue_number: issue,
        body: `${neutralizeEffectMarkers(body)}\n\n${marker}`,
      });
      return { issue, commentId: data.id };
    },
  });
}

/** Adds labels; a label already there changes nothing (set semantics: no reconciliation needed). */
export function createDemoLabelTool(
  config: Pick<DemoCommentConfig, 'octokit' | 'owner' | 'repo'>,
): EffectTool<{ issue: number; labels: string[] }, { issue: number; labels: string[] }> {
  const { octokit, owner, repo } = config;
  return defineSetEffectTool({
    description: `Adds labels to an issue of ${owner}/${repo}.`,
    inputSchema: z.object({ issue: z.number().int().positive(), labels: z.array(z.string().min(1)).min(1) }),
    execute: async ({ issue, labels }) => {
      const { data } = await octokit.rest.issues.addLabels({ owner, repo, issue_number: issue, labels });
      return { issue, labels: data.map((l) => l.name) };
    },
  });
}
