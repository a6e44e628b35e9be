// The "Mutation testing" section of docs/reliability.md, which test/reliability/report.ts writes.
// Its text is test/mutation/results.md, written by hand after a measurement (`npm run mutants`, one
// `--mutate` run per file or group; `node test/mutation/summary.mjs` prints the tables): the
// equivalent mutants' reasons are a judgement, not an observation a test leaves behind, so the
// section is kept as written and a regeneration of the report carries it over unchanged.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The recorded measurement the section reports. */
export const MUTATION_RESULTS_PATH = fileURLToPath(new URL('./results.md', import.meta.url));

/** The section's markdown lines (a level-2 heading first), or none before a measurement was recorded. */
export function mutationSection(): string[] {
  if (!existsSync(MUTATION_RESULTS_PATH)) return [];
  return readFileSync(MUTATION_RESULTS_PATH, 'utf8').trimEnd().split('\n');
}
