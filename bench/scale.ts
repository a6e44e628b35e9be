// Benchmark (not a test): scale across worker processes.
//   npm run bench:scale        (node --import tsx bench/scale.ts)
// 1, 2 and 4 worker processes (bench/bench-worker-process.ts) on one task queue, sharing one dev
// server and, for this library, one PostgreSQL effect and conversation store; BENCH_RUNS (500)
// runs of the agent of bench/bench-sides.ts (3 comment steps + the final text) started at once;
// the anchor (@temporalio/ai-sdk 1.23.0) with the same worker counts. Reported per round: runs/s,
// p50 / p99 of one effect call (the library's chamvi.effectCall activity, the anchor's postComment
// activity, timed inside the workers), claim contention (the library's chamvi_effect_busy_waits
// metric: calls that found their key busy and waited), and errors (activity executions that threw).
// Then a round of this library on 2 workers with one SIGKILLed when a third of the comments are
// posted: every run must end with exactly one comment per effect key on the GitHub fake.
// Env: BENCH_RUNS (500), BENCH_WORKERS (1,2,4; 0: only the kill round), BENCH_SIDES (library-postgres,anchor),
// BENCH_KILL (1: the kill round; 0: skip it), BENCH_PG_URL, TEMPORAL_CLI_PATH.
import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { findEffectMarkers } from '../src/index.js';
import { freePort, startDevServer } from './bench-server.js';
import { quantile, startSideRun, type Flavour } from './bench-sides.js';
import { WorkerProcess } from './bench-workers.js';
import { OWNER, REPO, openIssue, startRemote } from './history-remote.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 500);
const WORKER_COUNTS = (process.env['BENCH_WORKERS'] ?? '1,2,4')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const SIDES = (process.env['BENCH_SIDES'] ?? 'library-postgres,anchor').split(',') as Side[];
const KILL = process.env['BENCH_KILL'] !== '0';
const PG_URL = process.env['BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const STEPS = 3;
const EFFECT_ACTIVITY: Record<Side, string> = { 'library-postgres': 'chamvi.effectCall', anchor: 'postComment' };

type Side = 'library-postgres' | 'anchor';
const flavourOf = (side: Side): Flavour => (side === 'anchor' ? 'anchor' : 'library');

interface Row {
  readonly label: string;
  readonly runsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  /** Of the workers alive at the end (a killed worker's count dies with it). */
  readonly busyWaits: number | undefined;
  readonly errors: number;
  readonly failedRuns: number;
  readonly duplicates: number;
}

const server = await startDevServer();
const remote = await startRemote();
const clientConnection = await Connection.connect({ address: server.address });
const client = new Client({ connection: clientConnection });

async function startWorkers(side: Side, count: number): Promise<{ workers: WorkerProcess[]; ports: number[] }> {
  const taskQueue = `bench-scale-${side}-${count}-${randomUUID()}`;
  const config = { flavour: flavourOf(side), address: server.address, taskQueue, remoteUrl: remote.url, store: PG_URL };
  const ports: number[] = [];
  const workers: WorkerProcess[] = [];
  for (let i = 0; i < count; i++) {
    const metricsPort = await freePort();
    ports.push(metricsPort);
    workers.push(await WorkerProcess.start(config, { metricsPort }));
  }
  return { workers, ports };
}

/** Sum of a counter over every series of it on the workers' Prometheus endpoints (killed ones are skipped). */
async function counterSum(ports: readonly number[], name: string): Promise<number> {
  let sum = 0;
  for (const port of ports) {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    for (const line of text.split('\n'))
      if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.split(' ').pop());
  }
  return sum;
}

/** One run to its end; how many comments it posted and how many of its effect keys carry more than one. */
async function oneRun(side: Side, taskQueue: string): Promise<{ failed: boolean; duplicates: number }> {
  const issue = openIssue(remote);
  let failed = false;
  try {
    const handle = await startSideRun(client, flavourOf(side), {
      taskQueue,
      workflowId: `bench-scale-${randomUUID()}`,
      issue,
      comments: STEPS,
    });
    await handle.result();
  } catch {
    failed = true;
  }
  const comments = remote.tracker.listComments(OWNER, REPO, issue) ?? [];
  if (side === 'anchor')
    return { failed: failed || comments.length !== STEPS, duplicates: Math.max(0, comments.length - STEPS) };
  const perKey = new Map<string, number>();
  for (const c of comments) for (const key of findEffectMarkers(c.body)) perKey.set(key, (perKey.get(key) ?? 0) + 1);
  const duplicates = [...perKey.values()].reduce((n, k) => n + k - 1, 0);
  return { failed: failed || perKey.size !== STEPS, duplicates };
}

async function round(side: Side, count: number, kill: boolean): Promise<Row> {
  const { workers, ports } = await startWorkers(side, count);
  const taskQueue = workers[0]!.config.taskQueue;
  try {
    await Promise.all(workers.map((w) => w.mark()));
    const before = await Promise.all(ports.map((port) => counterSum([port], 'chamvi_effect_busy_waits')));
    const started = performance.now();
    let posted = 0;
    const runs = Array.from({ length: RUNS }, () =>
      oneRun(side, taskQueue).then((r) => {
        posted++;
        return r;
      }),
    );
    let killed: WorkerProcess | undefined;
    if (kill) {
      // Mid-way: a third of the runs done, the rest in flight on both workers.
      while (posted < RUNS / 3) await new Promise((r) => setTimeout(r, 50));
      killed = workers[workers.length - 1]!;
      await killed.kill();
    }
    const results = await Promise.all(runs);
    const seconds = (performance.now() - started) / 1000;
    const alive = workers.filter((w) => w !== killed);
    const usages = await Promise.all(alive.map((w) => w.usage()));
    const durations = usages.flatMap((u) => u.activities[EFFECT_ACTIVITY[side]]?.durations ?? []).sort((a, b) => a - b);
    const errors = usages.reduce((n, u) => n + Object.values(u.activities).reduce((m, a) => m + a.failures, 0), 0);
    const alivePorts = ports.filter((_, i) => workers[i] !== killed);
    const aliveBefore = before.filter((_, i) => workers[i] !== killed).reduce((a, b) => a + b, 0);
    const busyWaits =
      side === 'anchor' ? undefined : (await counterSum(alivePorts, 'chamvi_effect_busy_waits')) - aliveBefore;
    return {
      label: `${side}, ${count} worker${count > 1 ? 's' : ''}${kill ? ', one SIGKILLed mid-way' : ''}`,
      runsPerSecond: RUNS / seconds,
      p50: quantile(durations, 0.5),
      p99: quantile(durations, 0.99),
      busyWaits,
      errors,
      failedRuns: results.filter((r) => r.failed).length,
      duplicates: results.reduce((n, r) => n + r.duplicates, 0),
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

let failed = false;
const print = (r: Row) => {
  console.log(
    `| ${r.label} | ${r.runsPerSecond.toFixed(1)} | ${r.p50.toFixed(0)} / ${r.p99.toFixed(0)} | ${r.busyWaits ?? 'n/a'} | ${r.errors} | ${r.failedRuns} | ${r.duplicates} |`,
  );
  if (r.label.startsWith('library') && (r.failedRuns > 0 || r.duplicates > 0)) failed = true;
};
try {
  console.log(`${RUNS} runs x ${STEPS} comment steps started at once per round; load at start ${load()}`);
  console.log('');
  console.log(
    '| round | runs/s | effect call p50 / p99, ms | busy waits | activity errors | failed runs | duplicate effects |',
  );
  console.log('| --- | ---: | --- | ---: | ---: | ---: | ---: |');
  for (const count of WORKER_COUNTS) for (const side of SIDES) print(await round(side, count, false));
  if (KILL && SIDES.includes('library-postgres')) print(await round('library-postgres', 2, true));
  console.log('');
  console.log(`load at the end ${load()}`);
} finally {
  await clientConnection.close();
  await remote.stop();
  await server.stop();
}
process.exit(failed ? 1 : 0);

function load(): string {
  return process
    .getBuiltinModule('node:os')
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}
