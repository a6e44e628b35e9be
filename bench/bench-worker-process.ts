// One benchmark side's worker in a process of its own, so that its CPU time and peak RSS are its
// own: started by bench/bench-workers.ts with BENCH_WORKER (a JSON WorkerProcessConfig), it
// answers the parent's messages:
//   mark    -> starts a measurement: CPU time from here, peak RSS reset (Linux clear_refs)
//   report  -> since the mark (and with BENCH_HEAP_PROF, its allocations written to a file): CPU user+sys ms (in all and per thread name: MainThread, the
//              workflow WorkerThreads, V8Worker for GC and compilation, tokio-runtime-w for
//              Temporal's Core), peak RSS MB, and per activity type the durations of its
//              executions in ms and how many threw
// With BENCH_METRICS_PORT, the Temporal runtime serves its metrics (the library's chamvi_effect_*
// among them) in Prometheus text form on that port.
//   stop    -> shuts the worker down and exits
import { Context } from '@temporalio/activity';
import { DefaultLogger, NativeConnection, Runtime, type ActivityInboundCallsInterceptor } from '@temporalio/worker';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createSideWorker, type Flavour } from './bench-sides.js';

export interface WorkerProcessConfig {
  readonly flavour: Flavour;
  readonly address: string;
  readonly taskQueue: string;
  readonly remoteUrl: string;
  readonly store: string;
  /** A prebuilt workflow bundle (bench-sides.ts `bundleSide`); absent, the worker bundles at start. */
  readonly workflowBundlePath?: string;
}

export interface ActivityStats {
  readonly durations: number[];
  failures: number;
}

export type WorkerMessage = { type: 'mark' } | { type: 'report' } | { type: 'stop' };
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'marked' }
  | {
      type: 'report';
      cpuMs: number;
      threadCpuMs: Record<string, number>;
      peakRssMb: number;
      activities: Record<string, ActivityStats>;
      commits: number;
      pgStatements: number;
    };

const config = JSON.parse(process.env['BENCH_WORKER'] ?? '') as WorkerProcessConfig;
const metricsPort = process.env['BENCH_METRICS_PORT'];
Runtime.install({
  logger: new DefaultLogger('ERROR'),
  ...(metricsPort === undefined
    ? {}
    : { telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${metricsPort}` } } } }),
});
let activities: Record<string, ActivityStats> = {};
// SQLite transactions committed (each one fsync under synchronous=FULL), counted where they happen.
let commits = 0;
const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
const { value: exec } = Object.getOwnPropertyDescriptor(DatabaseSync.prototype, 'exec') as {
  value: (this: InstanceType<typeof DatabaseSync>, sql: string) => void;
};
DatabaseSync.prototype.exec = function (this: InstanceType<typeof DatabaseSync>, sql: string) {
  if (sql === 'COMMIT') commits++;
  exec.call(this, sql);
};
// PostgreSQL statements sent (each one round trip), counted in pg's client; pg loads only if installed.
let pgStatements = 0;
const pg = (await import('pg').catch(() => undefined))?.default;
if (pg !== undefined) {
  const { query } = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (
    this: unknown,
    ...args: unknown[]
  ) {
    pgStatements++;
    return query.apply(this, args);
  };
}
const timing: ActivityInboundCallsInterceptor = {
  async execute(input, next) {
    const type = Context.current().info.activityType;
    const stats = (activities[type] ??= { durations: [], failures: 0 });
    const started = performance.now();
    try {
      return await next(input);
    } catch (error) {
      stats.failures++;
      throw error;
    } finally {
      stats.durations.push(performance.now() - started);
    }
  },
};
const connection = await NativeConnection.connect({ address: config.address });
const worker = await createSideWorker(config.flavour, {
  ...config,
  connection,
  workerOptions: { interceptors: { activity: [() => ({ inbound: timing })] } },
});

function cpuMs(): number {
  const { userCPUTime, systemCPUTime } = process.resourceUsage();
  return (userCPUTime + systemCPUTime) / 1000;
}

/**
 * CPU ms per thread name (Linux: utime + stime of every live thread in /proc/self/task, in clock
 * ticks of 10 ms). A thread that exited since the mark is missing, so the parts may sum to less
 * than {@link cpuMs}.
 */
function threadCpuMs(): Record<string, number> {
  const byName: Record<string, number> = {};
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return byName;
  }
  for (const task of tasks) {
    try {
      const name = readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      byName[name] = (byName[name] ?? 0) + ticks * 10;
    } catch {
      // The thread exited between the listing and the read.
    }
  }
  return byName;
}

function since(now: Record<string, number>, mark: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(now).map(([name, ms]) => [name, ms - (mark[name] ?? 0)]));
}

/** VmHWM in MB: the peak resident set since the process started or since the last reset. */
function peakRssMb(): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match === null ? process.resourceUsage().maxRSS / 1024 : Number(match[1]) / 1024;
}

function resetPeakRss(): void {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Not Linux, or not allowed: the peak then counts from the process start.
  }
}

// BENCH_HEAP_PROF=dir: the main thread's allocations between a mark and its report, sampled with
// the objects GC already collected (what the allocation rate, and so the GC's CPU, comes from),
// written as a .heapprofile per round.
const heapProfDir = process.env['BENCH_HEAP_PROF'];
const inspector = heapProfDir === undefined ? undefined : new (await import('node:inspector/promises')).Session();
inspector?.connect();
let rounds = 0;
async function startHeapSampling(): Promise<void> {
  await inspector?.post('HeapProfiler.startSampling', {
    samplingInterval: 16384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}
async function stopHeapSampling(): Promise<void> {
  if (inspector === undefined || heapProfDir === undefined) return;
  const { profile } = await inspector.post('HeapProfiler.stopSampling');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(heapProfDir, { recursive: true });
  writeFileSync(`${heapProfDir}/${config.flavour}-${process.pid}-${++rounds}.heapprofile`, JSON.stringify(profile));
}

const send = (reply: WorkerReply) => process.send?.(reply);
let markedCpu = cpuMs();
let markedThreads = threadCpuMs();
let stopping: () => void = () => undefined;
const stopped = new Promise<void>((resolve) => (stopping = resolve));
async function answer(message: WorkerMessage): Promise<void> {
  if (message.type === 'mark') {
    await startHeapSampling();
    resetPeakRss();
    markedCpu = cpuMs();
    markedThreads = threadCpuMs();
    activities = {};
    commits = 0;
    pgStatements = 0;
    send({ type: 'marked' });
  } else if (message.type === 'report') {
    const cpu = cpuMs() - markedCpu;
    await stopHeapSampling();
    send({
      type: 'report',
      cpuMs: cpu,
      threadCpuMs: since(threadCpuMs(), markedThreads),
      peakRssMb: peakRssMb(),
      activities,
      commits,
      pgStatements,
    });
  } else stopping();
}
process.on('message', (message: WorkerMessage) => {
  answer(message).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
});
process.on('disconnect', () => stopping());
send({ type: 'ready' });
await worker.runUntil(stopped);
await connection.close();
process.exit(0);
