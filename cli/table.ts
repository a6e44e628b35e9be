/** Renders rows as a plain-text table with a header rule; cells are padded to the widest value. */
export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Shortens a long effect key for a table, keeping its start (the run id) and its end. */
export function shortKey(key: string, max = 72): string {
  if (key.length <= max) return key;
  const keep = Math.floor((max - 1) / 2);
  return `${key.slice(0, keep)}…${key.slice(key.length - keep)}`;
}

/**
 * The table of one run's effect calls (the workflow's effect report): tool, key, outcome,
 * attempts, and the last error of a failed call or the reason of a denied one.
 */
export function effectReportTable(
  effects: ReadonlyArray<{
    toolName: string;
    key: string;
    outcome: string;
    attempts: number;
    error?: { message: string };
    reason?: string;
  }>,
): string {
  if (effects.length === 0) return '  (no effect calls)';
  const detail = (e: (typeof effects)[number]): string =>
    (e.error?.message ?? e.reason ?? '').replace(/\s+/g, ' ').slice(0, 120);
  return renderTable(
    ['tool', 'key', 'outcome', 'attempts', 'detail'],
    effects.map((e) => [e.toolName, shortKey(e.key), e.outcome, String(e.attempts), detail(e)]),
  )
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
