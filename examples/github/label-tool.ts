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
  });
}
