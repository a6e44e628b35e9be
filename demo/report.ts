import type { AgentRunOutput } from '@chamvi/temporal/client';
import type { LocalGitHubServer } from './github/index.js';

/** One demo run: the issue it answers, its workflow, and its result once it finished. */
export interface DemoRun {
  readonly issue: number;
  readonly title: string;
  readonly workflowId: string;
  result?: AgentRunOutput;
  error?: string;
}

/** What the demo checks on one issue once its run ended: it must have exactly one comment. */
export interface DemoIssueCheck {
  readonly run: DemoRun;
  readonly comments: number;
  readonly labels: readonly string[];
  /** Author and body of each comment (for `CHAMVI_DEBUG=1`). */
  readonly bodies: ReadonlyArray<{ readonly login: string; readonly body: string }>;
  readonly ok: boolean;
}

/** The demo's outcome: each issue's check, and whether every issue got exactly one comment. */
export interface DemoReport {
  readonly issues: readonly DemoIssueCheck[];
  readonly ok: boolean;
}

/** Reads the issue tracker after the runs: the comments and labels of each run's issue. */
export function demoReport(
  runs: readonly DemoRun[],
  github: LocalGitHubServer,
  owner: string,
  repo: string,
): DemoReport {
  const issues = runs.map((run): DemoIssueCheck => {
    const comments = github.tracker.listComments(owner, repo, run.issue) ?? [];
    const labels = (github.tracker.listLabels(owner, repo, run.issue) ?? []).map((l) => l.name);
    return {
      run,
      comments: comments.length,
      labels,
      bodies: comments.map((c) => ({ login: c.user.login, body: c.body })),
      ok: comments.length === 1,
    };
  });
  return { issues, ok: issues.every((i) => i.ok) };
}
