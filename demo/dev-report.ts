import type { DemoReport } from './report.js';
import { effectReportTable, renderTable } from '../cli/table.js';

/** Prints the effect table of every demo run, then the comment count per issue. */
export function printDemoReport(report: DemoReport): void {
  const out = (text: string): boolean => process.stdout.write(`${text}\n`);
  for (const { run } of report.issues) {
    out(`\nissue #${run.issue} · workflow ${run.workflowId}${run.result ? ` · run ${run.result.runId}` : ''}`);
    if (run.result) out(effectReportTable(run.result.effects));
    else out(`  run did not finish: ${run.error ?? 'unknown'}`);
  }
  out('\ncomments per issue (must be exactly 1):');
  out(
    renderTable(
      ['issue', 'title', 'comments', 'labels', 'check'],
      report.issues.map((r) => [
        `#${r.run.issue}`,
        r.run.title,
        String(r.comments),
        r.labels.join(',') || '-',
        r.ok ? 'ok' : 'FAIL',
      ]),
    )
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  );
  if (process.env['CHAMVI_DEBUG'] === '1') {
    for (const r of report.issues)
      for (const c of r.bodies) out(`DEBUG #${r.run.issue} ${c.login}: ${JSON.stringify(c.body)}`);
  }
}
