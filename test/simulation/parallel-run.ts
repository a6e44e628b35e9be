import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SimulationRun, SuiteRun } from './report-section.js';

/** One job's share: `--from` and `--seeds`. */
interface Share {
  readonly from: number;
  readonly seeds: number;
}

/**
 * Runs consecutive seeds in `jobs` child processes of the CLI (`--from`/`--seeds` each, every
 * suite asked for), passing their lines through as they come, and merges what they recorded: the
 * suites' seeds, violations, CPU seconds and counts are summed; `seconds` is the wall-clock time
 * of the whole run. Each seed's history is the same in whichever process runs it.
 */
export async function runInJobs(
  first: number,
  count: number,
  jobs: number,
  args: readonly string[],
  print: (line: string) => void,
): Promise<Record<string, SuiteRun>> {
  const dir = mkdtempSync(join(tmpdir(), 'chamvi-sim-'));
  const started = performance.now();
  const shares: Share[] = [];
  const size = Math.ceil(count / jobs);
  for (let from = first; from < first + count; from += size) {
    shares.push({ from, seeds: Math.min(size, first + count - from) });
  }
  try {
    const records = await Promise.all(
      shares.map((share, i) =>
        runJob(share, join(dir, `job-${i}.json`), args, (line) => print(`[job ${i + 1}] ${line}`)),
      ),
    );
    const merged: Record<string, SuiteRun> = {};
    for (const record of records) {
      for (const [name, run] of Object.entries(record.suites ?? {})) merged[name] = add(merged[name], run);
    }
    const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
    for (const run of Object.values(merged)) Object.assign(run, { seconds });
    return merged;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runJob(
  share: Share,
  record: string,
  args: readonly string[],
  print: (line: string) => void,
): Promise<SimulationRun> {
  const cli = fileURLToPath(new URL('./cli.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', cli, ...args, '--from', String(share.from), '--seeds', String(share.seeds), '--record', record],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  createInterface({ input: child.stdout }).on('line', print);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      // Exit code 1 means violations (they are in the record); anything else is a failure to run.
      if (code !== 0 && code !== 1) reject(new Error(`a simulation job exited with ${code ?? 'a signal'}`));
      else resolve(JSON.parse(readFileSync(record, 'utf8')) as SimulationRun);
    });
  });
}

function add(sum: SuiteRun | undefined, run: SuiteRun): SuiteRun {
  if (sum === undefined) return { ...run, counts: { ...run.counts } };
  const counts: Record<string, number> = { ...sum.counts };
  for (const [k, n] of Object.entries(run.counts)) counts[k] = (counts[k] ?? 0) + n;
  return {
    seeds: sum.seeds + run.seeds,
    violations: sum.violations + run.violations,
    seconds: sum.seconds,
    cpuSeconds: Number((sum.cpuSeconds + run.cpuSeconds).toFixed(1)),
    counts,
    setup: sum.setup,
  };
}
