// The deterministic simulator of the effect protocol (issue 13):
//
//   npm run sim -- --seeds N [--from S0] [--seed S] [--verbose] [--record FILE]
//
// Runs seeds S0 .. S0+N-1 (S0 = 1), or the one seed S, each one exact history of the real
// applyEffect against the store model under a virtual clock and injected faults. Prints one line
// per violated invariant with its seed (and the history's trace for the first few failing seeds,
// or for every seed with --verbose), then `N seeds, V violations`; exits 1 on a violation.
// --record writes the run's numbers as JSON (docs/reliability.md's simulation section is
// generated from test/simulation/last-run.json).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { SimulationRun } from './report-section.js';
import { detectProtocol, simulate, type SeedResult } from './simulate.js';

/** Parsed command line. */
interface Options {
  readonly seeds: readonly number[];
  readonly verbose: boolean;
  readonly record?: string;
  /** The command as typed after `npm run sim --`, for the record. */
  readonly args: string;
}

const USAGE = 'usage: npm run sim -- --seeds N [--from S0] [--seed S] [--verbose] [--record FILE]';
/** Failing seeds whose trace is printed in full (the rest name the command that replays them). */
const TRACED_FAILURES = 5;

function parse(argv: readonly string[]): Options {
  let count: number | undefined;
  let from = 1;
  let single: number | undefined;
  let verbose = false;
  let record: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): number => {
      const n = Number(argv[++i]);
      if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${arg} needs a non-negative integer. ${USAGE}`);
      return n;
    };
    if (arg === '--seeds') count = value();
    else if (arg === '--from') from = value();
    else if (arg === '--seed') single = value();
    else if (arg === '--verbose') verbose = true;
    else if (arg === '--record') {
      record = argv[++i];
      if (record === undefined) throw new Error(`--record needs a file. ${USAGE}`);
    } else throw new Error(`unknown argument ${arg}. ${USAGE}`);
  }
  const common = { verbose, args: argv.filter((a, i) => a !== '--record' && argv[i - 1] !== '--record').join(' ') };
  const recorded = record === undefined ? common : { ...common, record };
  if (single !== undefined) return { seeds: [single], ...recorded };
  const n = count ?? 100;
  return { seeds: Array.from({ length: n }, (_, i) => from + i), ...recorded };
}

/** Runs the seeds and prints the report; resolves with the number of violations. */
export async function main(argv: readonly string[], print: (line: string) => void = console.log): Promise<number> {
  const options = parse(argv);
  const features = await detectProtocol();
  const started = performance.now();
  let violations = 0;
  let failingSeeds = 0;
  let applications = 0;
  const explained = new Map<string, number>();
  for (const seed of options.seeds) {
    const result: SeedResult = await simulate(seed, features);
    applications += result.applications;
    for (const { cause } of result.explained) explained.set(cause, (explained.get(cause) ?? 0) + 1);
    for (const v of result.violations) print(`seed ${seed}: ${v.invariant}: ${v.message}`);
    if (result.violations.length > 0) failingSeeds++;
    violations += result.violations.length;
    const traced = options.verbose || (result.violations.length > 0 && failingSeeds <= TRACED_FAILURES);
    if (options.verbose)
      for (const e of result.explained) print(`seed ${seed}: documented duplicate, ${e.cause}: ${e.because}`);
    if (traced) print(result.trace);
    else if (result.violations.length > 0) print(`    (replay: npm run sim -- --seed ${seed} --verbose)`);
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const causes = [...explained].map(([cause, n]) => `${n} ${cause}`).join(', ') || 'none';
  print(
    `(${seconds} s; ${features.fenceOf === undefined ? 'no fence offered by the protocol: fenced remote drawn as marker; ' : ''}${applications} applications; documented duplicates: ${causes})`,
  );
  if (options.record !== undefined) {
    const run: SimulationRun = {
      command: `npm run sim -- ${options.args}`,
      seeds: options.seeds.length,
      violations,
      seconds: Number(seconds),
      applications,
      documentedDuplicates: Object.fromEntries(explained),
      fence: features.fenceOf !== undefined,
      node: process.version,
      cpus: availableParallelism(),
      commit: currentCommit(),
      date: new Date().toISOString().slice(0, 10),
    };
    writeFileSync(options.record, `${JSON.stringify(run, null, 2)}\n`);
  }
  print(`${options.seeds.length} seeds, ${violations} violations`);
  return violations;
}

function currentCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (violations) => {
      process.exitCode = violations > 0 ? 1 : 0;
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 2;
    },
  );
}
