// The parent's handle on a benchmark worker process (bench/bench-worker-process.ts): start it,
// mark and read its CPU and peak RSS, stop it, or kill it outright.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ActivityStats, WorkerMessage, WorkerProcessConfig, WorkerReply } from './bench-worker-process.js';

export interface Usage {
  readonly cpuMs: number;
  /** CPU ms per thread name (see bench-worker-process.ts). */
  readonly threadCpuMs: Record<string, number>;
  readonly peakRssMb: number;
  readonly activities: Record<string, ActivityStats>;
  /** SQLite transactions committed. */
  readonly commits: number;
  /** PostgreSQL statements sent. */
  readonly pgStatements: number;
}

export class WorkerProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly config: WorkerProcessConfig,
  ) {}

  /** Starts the worker and waits until it polls. `cpuProfileDir` runs it under `node --cpu-prof`. */
  static async start(
    config: WorkerProcessConfig,
    options: { cpuProfileDir?: string; metricsPort?: number } = {},
  ): Promise<WorkerProcess> {
    const { cpuProfileDir, metricsPort } = options;
    const execArgv = [
      '--import',
      'tsx',
      ...(cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`]),
    ];
    const child = fork(fileURLToPath(new URL('./bench-worker-process.ts', import.meta.url)), [], {
      execArgv,
      env: {
        ...process.env,
        BENCH_WORKER: JSON.stringify(config),
        ...(metricsPort === undefined ? {} : { BENCH_METRICS_PORT: String(metricsPort) }),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const worker = new WorkerProcess(child, config);
    await worker.next('ready');
    return worker;
  }

  async mark(): Promise<void> {
    this.send({ type: 'mark' });
    await this.next('marked');
  }

  async usage(): Promise<Usage> {
    this.send({ type: 'report' });
    const reply = await this.next('report');
    return {
      cpuMs: reply.cpuMs,
      threadCpuMs: reply.threadCpuMs,
      peakRssMb: reply.peakRssMb,
      activities: reply.activities,
      commits: reply.commits,
      pgStatements: reply.pgStatements,
    };
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.send({ type: 'stop' });
    await exited;
  }

  /** SIGKILL: no shutdown, no last write; what a crashed host looks like to the others. */
  async kill(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  private send(message: WorkerMessage): void {
    this.child.send(message);
  }

  private next<T extends WorkerReply['type']>(type: T): Promise<Extract<WorkerReply, { type: T }>> {
    return new Promise((resolve, reject) => {
      const onMessage = (reply: WorkerReply) => {
        if (reply.type !== type) return;
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        resolve(reply as Extract<WorkerReply, { type: T }>);
      };
      const onExit = (code: number | null) => {
        this.child.off('message', onMessage);
        reject(new Error(`benchmark worker ${this.config.flavour} exited (${code}) before answering ${type}`));
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
    });
  }
}
