// Benchmark (not a test): throughput, CPU and memory of one worker process next to bare Temporal.
//   npm run bench:throughput        (node --import tsx bench/throughput.ts)
// The agent of bench/bench-sides.ts (3 comment steps + 1 final text step per run), 100 runs at
// once, on one dev server, each side's worker in a process of its own (bench/bench-worker-process.ts)
// so its CPU user+sys and peak RSS (VmHWM, reset at each round's start) are its alone. Sides:
//   library-sqlite    this library, effect and conversation store an SQLite file (WAL, synchronous=FULL)
//   library-postgres  this library, effect and conversation store PostgreSQL (BENCH_PG_URL)
//   library-memory    this library on the in-memory store (not durable; only with BENCH_SIDES): what
//                     the library costs without store I/O
//   anchor            @temporalio/ai-sdk 1.23.0
//   floor             bare Temporal, the same loop, no store
// A warm-up round per side (not counted), then BENCH_ROUNDS rounds in rotated order; per side the
// median of its rounds, and per library side the medians of its per-round ratios to the floor
// and the anchor (the same minutes of machine load). Exits 1 when a library side misses a goal:
// >= 0.85x the floor's runs/s, <= 1.15x its CPU, <= 1.10x its peak RSS.
// Every side's workflows are bundled ahead, in this process, and each worker loads its bundle
// (Temporal's advice for production): webpack's memory, 150-200 MB that a worker bundling at start
// keeps, would otherwise sit in every side's RSS. BENCH_BUNDLE=start has each worker bundle its own.
// Env: BENCH_CONCURRENT (100), BENCH_ROUNDS (3), BENCH_SIDES (all four), BENCH_PG_URL
// (postgres://postgres@127.0.0.1:5432/test), BENCH_CPU_PROF (a folder: every side's worker runs
// under node --cpu-prof and writes its profiles into a subfolder named after the side), TEMPORAL_CLI_PATH.
import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer } from './bench-server.js';
import { bundleSide, concurrentRound, median, runOnce, type Flavour } from './bench-sides.js';
import { WorkerProcess } from './bench-workers.js';
import { startRemote } from './history-remote.js';

const CONCURRENT = Number(process.env['BENCH_CONCURRENT'] ?? 100);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const PG_URL = process.env['BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const CPU_PROF = process.env['BENCH_CPU_PROF'];
const BUNDLE = process.env['BENCH_BUNDLE'] ?? 'prebuilt';
const STEPS = 3;
const GOAL = { throughput: 0.85, cpu: 1.15, rss: 1.1 };

type Side = 'library-sqlite' | 'library-postgres' | 'library-memory' | 'anchor' | 'floor';
const ALL: readonly Side[] = ['library-sqlite', 'library-postgres', 'anchor', 'floor'];
const SIDES = (process.env['BENCH_SIDES'] ?? ALL.join(',')).split(',') as Side[];
const flavourOf = (side: Side): Flavour => (side.startsWith('library') ? 'library' : (side as Flavour));

interface Measured {
  readonly runsPerSecond: number;
  readonly cpuS: number;
  /** CPU s per thread name. */
  readonly threadCpuS: Record<string, number>;
  readonly peakRssMb: number;
  readonly p50: number;
  readonly p99: number;
  /** SQLite commits (library-sqlite) or PostgreSQL statements (library-postgres) per run. */
  readonly storeTripsPerRun: number;
}

const folder = mkdtempSync(join(tmpdir(), 'bench-throughput-'));
const server = await startDevServer();
const remote = await startRemote();
const clientConnection = await Connection.connect({ address: server.address });
const client = new Client({ connection: clientConnection });
const workers = new Map<Side, WorkerProcess>();
let failed = false;

try {
  if (BUNDLE !== 'prebuilt' && BUNDLE !== 'start') throw new Error(`BENCH_BUNDLE is prebuilt or start, not ${BUNDLE}`);
  const bundles = new Map<Flavour, string>();
  if (BUNDLE === 'prebuilt') {
    for (const flavour of new Set(SIDES.map(flavourOf))) {
      const path = join(folder, `${flavour}-workflows.js`);
      writeFileSync(path, await bundleSide(flavour));
      bundles.set(flavour, path);
    }
  }
  for (const side of SIDES) {
    const store =
      side === 'library-sqlite' ? join(folder, 'effects.db') : side === 'library-postgres' ? PG_URL : 'memory:';
    const config = {
      flavour: flavourOf(side),
      address: server.address,
      taskQueue: `bench-${side}-${randomUUID()}`,
      remoteUrl: remote.url,
      store,
      ...(bundles.has(flavourOf(side)) ? { workflowBundlePath: bundles.get(flavourOf(side)) } : {}),
    };
    workers.set(
      side,
      await WorkerProcess.start(config, CPU_PROF !== undefined ? { cpuProfileDir: join(CPU_PROF, side) } : {}),
    );
  }
  const worker = (side: Side) => workers.get(side) as WorkerProcess;
  const round = async (side: Side): Promise<Measured> => {
    const w = worker(side);
    await w.mark();
    const result = await concurrentRound(CONCURRENT, () =>
      runOnce(client, remote, flavourOf(side), w.config.taskQueue, STEPS),
    );
    const usage = await w.usage();
    return {
      ...result,
      cpuS: usage.cpuMs / 1000,
      threadCpuS: Object.fromEntries(Object.entries(usage.threadCpuMs).map(([name, ms]) => [name, ms / 1000])),
      peakRssMb: usage.peakRssMb,
      storeTripsPerRun: (side === 'library-postgres' ? usage.pgStatements : usage.commits) / CONCURRENT,
    };
  };

  for (const side of SIDES) await round(side);
  const results = new Map<Side, Measured[]>(SIDES.map((side) => [side, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = SIDES.map((_, i) => SIDES[(i + r) % SIDES.length] as Side);
    for (const side of order) (results.get(side) as Measured[]).push(await round(side));
  }

  const of = (side: Side) => results.get(side) as Measured[];
  const med = (side: Side, pick: (m: Measured) => number) => median(of(side).map(pick));
  console.log(
    `${CONCURRENT} concurrent ${STEPS}-step runs, one worker process per side, workflows bundled ${BUNDLE === 'prebuilt' ? 'ahead' : 'by each worker at start'}, ${ROUNDS} rounds (rotated) after a warm-up; load ${loadAverage()}`,
  );
  console.log('');
  console.log(
    '| side | runs/s per round | runs/s (median) | CPU user+sys, s (median) | peak RSS, MB (median) | p50 / p99 ms (median) | store round trips per run |',
  );
  console.log('| --- | --- | ---: | ---: | ---: | --- | ---: |');
  for (const side of SIDES)
    console.log(
      `| ${side} | ${of(side)
        .map((m) => m.runsPerSecond.toFixed(1))
        .join(
          ', ',
        )} | ${med(side, (m) => m.runsPerSecond).toFixed(1)} | ${med(side, (m) => m.cpuS).toFixed(1)} | ${med(side, (m) => m.peakRssMb).toFixed(0)} | ${med(side, (m) => m.p50).toFixed(0)} / ${med(side, (m) => m.p99).toFixed(0)} | ${side.startsWith('library') ? med(side, (m) => m.storeTripsPerRun).toFixed(2) : ''} |`,
    );
  console.log('');
  const threadNames = [...new Set(SIDES.flatMap((side) => of(side).flatMap((m) => Object.keys(m.threadCpuS))))]
    .filter((name) => SIDES.some((side) => med(side, (m) => m.threadCpuS[name] ?? 0) >= 0.05))
    .sort();
  console.log(`CPU s by thread (median of rounds; threads under 0.05 s on every side left out):`);
  console.log('');
  console.log(`| side | ${threadNames.join(' | ')} |`);
  console.log(`| --- |${threadNames.map(() => ' ---: |').join('')}`);
  for (const side of SIDES)
    console.log(
      `| ${side} | ${threadNames.map((name) => med(side, (m) => m.threadCpuS[name] ?? 0).toFixed(2)).join(' | ')} |`,
    );
  console.log('');
  const ratio = (side: Side, other: Side, pick: (m: Measured) => number) =>
    median(of(side).map((m, i) => pick(m) / pick(of(other)[i] as Measured)));
  for (const side of SIDES.filter((s) => s.startsWith('library'))) {
    for (const other of (['floor', 'anchor'] as const).filter((o) => SIDES.includes(o))) {
      const t = ratio(side, other, (m) => m.runsPerSecond);
      const c = ratio(side, other, (m) => m.cpuS);
      const m = ratio(side, other, (x) => x.peakRssMb);
      let verdict = '';
      if (other === 'floor') {
        const met = t >= GOAL.throughput && c <= GOAL.cpu && m <= GOAL.rss;
        failed ||= !met;
        verdict = met ? ' — goal met' : ` — goal MISSED (>= ${GOAL.throughput}, <= ${GOAL.cpu}, <= ${GOAL.rss})`;
      }
      console.log(
        `- ${side} / ${other}: throughput ${t.toFixed(2)}x, CPU ${c.toFixed(2)}x, peak RSS ${m.toFixed(2)}x${verdict}`,
      );
    }
  }
} finally {
  await Promise.all([...workers.values()].map((w) => w.stop()));
  await clientConnection.close();
  await remote.stop();
  await server.stop();
  rmSync(folder, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

function loadAverage(): string {
  return process
    .getBuiltinModule('node:os')
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}
