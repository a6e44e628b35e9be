import type { Octokit } from '@octokit/rest';
import { z } from 'zod';
import { defineSetEffectTool } from '@chamvi/temporal/strategies';

/** What the label tool needs. */
export interface GitHubLabelToolConfig {
  readonly octokit: Octokit;
  readonly owner: string;
  readonly repo: string;
}

const input = z.object({
  issue: z.number().int().positive().describe('Issue number'),
  labels: z.array(z.string().min(1)).min(1).describe('Labels to add'),
});

/**
 * An effect tool that adds labels to an issue. Adding a label that is already there changes
 * nothing (GitHub's labels are a set), so the tool needs no reconciliation: it is declared with
 * `defineSetEffectTool` (no `alreadyApplied`), and after a crash the retry simply adds the labels
 * again. The default effect key (run id, tool name, hash of the input) applies.
 *
 * Its undo removes the labels the call asked for. A set cannot tell who added a member, so a
 * label that was on the issue before the call is removed too; keep labels a run may have found in
 * place out of a compensated tool, or record what was there in `execute` and remove only the rest.
 */
export function createGitHubLabelTool(config: GitHubLabelToolConfig) {
  const { octokit, owner, repo } = config;
  return defineSetEffectTool({
    description: `Adds labels to an issue of ${owner}/${repo}.`,
    inputSchema: input,
    execute: async ({ issue, labels }) => {
      const res = await octokit.rest.issues.addLabels({ owner, repo, issue_number: issue, labels });
      return { issue, labels: res.data.map((l) => l.name) };
    },
    // Removing is set semantics too (a label not on the issue changes nothing, GitHub answers 404),
    // so the undo needs no alreadyCompensated: a retry after a crash simply removes again.
    compensate: async (_result, { issue, labels }) => {
      for (const name of labels) {
        try {
          await octokit.rest.issues.removeLabel({ owner, repo, issue_number: issue, name });
        } catch (error) {
          if ((error as { status?: unknown }).status !== 404) throw error;
        }
      }
      return { issue, removed: labels };
    },
  });
}
