import type { AgentRunOutput } from '../worker/index.js';
import type { LocalGitHubServer } from '../testing/github/index.js';
import { effectReportTable, renderTable } from './table.js';

/** One demo run: the issue it answers, its workflow, and its result once it finished. */
export interface DemoRun {
  readonly issue: number;
  readonly title: string;
  readonly workflowId: string;
  result?: AgentRunOutput;
  error?: string;
}

/** The effect table of every run, then the comment count per issue; true when each issue has exactly one. */
export function printDemoReport(
  runs: readonly DemoRun[],
  github: LocalGitHubServer,
  owner: string,
  repo: string,
): boolean {
  const out = (text: string): boolean => process.stdout.write(`${text}\n`);
  for (const run of runs) {
    out(`\nissue #${run.issue} · workflow ${run.workflowId}${run.result ? ` · run ${run.result.runId}` : ''}`);
    if (run.result) out(effectReportTable(run.result.effects));
    else out(`  run did not finish: ${run.error ?? 'unknown'}`);
  }
  const rows = runs.map((run) => {
    const comments = github.tracker.listComments(owner, repo, run.issue) ?? [];
    const labels = (github.tracker.listLabels(owner, repo, run.issue) ?? []).map((l) => l.name);
    return { run, comments: comments.length, labels };
  });
  out('\ncomments per issue (must be exactly 1):');
  out(
    renderTable(
      ['issue', 'title', 'comments', 'labels', 'check'],
      rows.map((r) => [
        `#${r.run.issue}`,
        r.run.title,
        String(r.comments),
        r.labels.join(',') || '-',
        r.comments === 1 ? 'ok' : 'FAIL',
      ]),
    )
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  );
  if (process.env['CHAMVI_DEBUG'] === '1') {
    for (const r of rows)
      for (const c of github.tracker.listComments(owner, repo, r.run.issue) ?? [])
        out(`DEBUG #${r.run.issue} ${c.user.login}: ${JSON.stringify(c.body)}`);
  }
  return rows.every((r) => r.comments === 1);
}
