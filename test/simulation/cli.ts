// The deterministic simulator (the effect protocol, the conversation store and the run streams):
//
//   npm run sim -- --seeds N [--from S0] [--seed S] [--suite NAME] [--jobs J] [--verbose] [--record FILE]
//
// Runs seeds S0 .. S0+N-1 (S0 = 1), or the one seed S, of each suite (`effects`, `conversation`,
// `stream`, or `all`, the default): each seed one exact history of the real code under a virtual
// clock and injected faults. Prints one line per violated invariant with its suite and seed (and
// the history's trace for the first few failing seeds, or for every seed with --verbose), then
// `N seeds, V violations`; exits 1 on a violation. --jobs runs the seeds in J processes (one per
// core), a consecutive share each. --record writes the run's numbers as JSON
// (docs/reliability.md's simulation section is generated from test/simulation/last-run.json).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { runInJobs } from './parallel-run.js';
import type { SimulationRun, SuiteRun } from './report-section.js';
import { prepareSuite, SUITES, type SuiteName } from './suites.js';
import { openFindingOf } from './view-regression-seeds.js';

/** Parsed command line. */
interface Options {
  readonly seeds: readonly number[];
  readonly suites: readonly SuiteName[];
  /** Processes to share the seeds between (1: this one). */
  readonly jobs: number;
  readonly verbose: boolean;
  readonly record?: string;
  /** The command as typed after `npm run sim --`, for the record. */
  readonly args: string;
}

const USAGE = `usage: npm run sim -- --seeds N [--from S0] [--seed S] [--suite ${SUITES.join('|')}|all] [--jobs J] [--verbose] [--record FILE]`;
/** Failing seeds whose trace is printed in full, per suite (the rest name the command that replays them). */
const TRACED_FAILURES = 5;

function parse(argv: readonly string[]): Options {
  let count: number | undefined;
  let from = 1;
  let single: number | undefined;
  let verbose = false;
  let record: string | undefined;
  let suites: readonly SuiteName[] = SUITES;
  let jobs = 1;
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
    else if (arg === '--jobs') jobs = Math.max(1, value());
    else if (arg === '--verbose') verbose = true;
    else if (arg === '--suite') {
      const name = argv[++i];
      if (name === 'all') suites = SUITES;
      else if (SUITES.includes(name as SuiteName)) suites = [name as SuiteName];
      else throw new Error(`--suite needs one of ${SUITES.join(', ')} or all. ${USAGE}`);
    } else if (arg === '--record') {
      record = argv[++i];
      if (record === undefined) throw new Error(`--record needs a file. ${USAGE}`);
    } else throw new Error(`unknown argument ${arg}. ${USAGE}`);
  }
  const common = {
    suites,
    jobs,
    verbose,
    args: argv.filter((a, i) => a !== '--record' && argv[i - 1] !== '--record').join(' '),
  };
  const recorded = record === undefined ? common : { ...common, record };
  if (single !== undefined) return { seeds: [single], ...recorded };
  const n = count ?? 100;
  return { seeds: Array.from({ length: n }, (_, i) => from + i), ...recorded };
}

/** Runs the seeds of every suite asked for and prints the report; resolves with the number of violations that are no open finding. */
export async function main(argv: readonly string[], print: (line: string) => void = console.log): Promise<number> {
  const options = parse(argv);
  let runs: Record<string, SuiteRun> = {};
  let total = 0;
  const [first] = options.seeds;
  if (options.jobs > 1 && options.seeds.length > 1 && first !== undefined) {
    const passed = options.suites.length === 1 ? ['--suite', ...options.suites] : [];
    if (options.verbose) passed.push('--verbose');
    runs = await runInJobs(first, options.seeds.length, options.jobs, passed, print);
    for (const [name, run] of Object.entries(runs)) {
      total += run.violations;
      print(`(${name}: ${run.seconds} s in ${options.jobs} processes, ${run.cpuSeconds} s of CPU)`);
      print(`${name}: ${run.seeds} seeds, ${run.violations} violations`);
    }
  } else {
    for (const name of options.suites) {
      const run = await runSuite(name, options, print);
      runs[name] = run;
      total += run.violations;
    }
  }
  if (options.record !== undefined)
    writeFileSync(options.record, `${JSON.stringify(record(options, runs), null, 2)}\n`);
  const open = Object.values(runs).reduce((sum, run) => sum + (run.counts[OPEN_FINDING_COUNT] ?? 0), 0);
  print(
    `${options.seeds.length} seeds, ${total} violations` +
      (open > 0 ? ` (${open} from open findings, tracked in view-regression-seeds.ts; ${total - open} new)` : ''),
  );
  return total - open;
}

/**
 * Violations of a known, tracked finding (their seeds are regression tests that must still fail):
 * counted and printed, but they do not fail the run; any other violation does.
 */
const OPEN_FINDING_COUNT = 'open-finding violations';

async function runSuite(name: SuiteName, options: Options, print: (line: string) => void): Promise<SuiteRun> {
  const suite = await prepareSuite(name);
  const started = performance.now();
  const cpu = process.cpuUsage();
  let violations = 0;
  let failingSeeds = 0;
  const counts: Record<string, number> = {};
  const replay = (seed: number): string =>
    `npm run sim -- ${name === 'effects' ? '' : `--suite ${name} `}--seed ${seed} --verbose`;
  for (const seed of options.seeds) {
    const result = await suite.run(seed);
    for (const [k, n] of Object.entries(result.counts)) counts[k] = (counts[k] ?? 0) + n;
    const label = name === 'effects' ? `seed ${seed}` : `seed ${seed} (${name})`;
    for (const v of result.violations) {
      const open = openFindingOf(name, v);
      if (open !== undefined) counts[OPEN_FINDING_COUNT] = (counts[OPEN_FINDING_COUNT] ?? 0) + 1;
      print(
        `${label}: ${v.invariant}: ${v.message}${open === undefined ? '' : ` [open finding, as seed ${open.seed}]`}`,
      );
    }
    if (result.violations.length > 0) failingSeeds++;
    violations += result.violations.length;
    if (options.verbose) for (const note of result.notes) print(`${label}: ${note}`);
    const traced = options.verbose || (result.violations.length > 0 && failingSeeds <= TRACED_FAILURES);
    if (traced) print(result.trace());
    else if (result.violations.length > 0) print(`    (replay: ${replay(seed)})`);
  }
  const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
  const used = process.cpuUsage(cpu);
  const cpuSeconds = Number(((used.user + used.system) / 1e6).toFixed(1));
  const listed = Object.entries(counts)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  print(
    `(${name}: ${seconds} s, ${cpuSeconds} s of CPU; ${suite.setup === '' ? '' : `${suite.setup}; `}${listed || 'nothing counted'})`,
  );
  print(`${name}: ${options.seeds.length} seeds, ${violations} violations`);
  return { seeds: options.seeds.length, violations, seconds, cpuSeconds, counts, setup: suite.setup };
}

/** The run as `--record` writes it: the effect suite's numbers as before, every suite's under `suites`. */
function record(options: Options, runs: Record<string, SuiteRun>): SimulationRun {
  const effects = runs['effects'];
  const documented = Object.entries(effects?.counts ?? {})
    .filter(([k]) => k.startsWith('documented '))
    .map(([k, n]) => [k.slice('documented '.length), n] as const);
  return {
    command: `npm run sim -- ${options.args}`,
    seeds: options.seeds.length,
    violations: Object.values(runs).reduce((sum, r) => sum + r.violations, 0),
    // One suite after the other; in jobs, each suite's seconds are the whole run's.
    seconds: Number(
      (options.jobs > 1
        ? Math.max(...Object.values(runs).map((r) => r.seconds))
        : Object.values(runs).reduce((sum, r) => sum + r.seconds, 0)
      ).toFixed(1),
    ),
    applications: effects?.counts['applications'] ?? 0,
    documentedDuplicates: Object.fromEntries(documented),
    fence: effects === undefined || !effects.setup.startsWith('no fence'),
    node: process.version,
    cpus: availableParallelism(),
    commit: currentCommit(),
    date: new Date().toISOString().slice(0, 10),
    suites: runs,
  };
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
