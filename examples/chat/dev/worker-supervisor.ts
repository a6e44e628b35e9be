import { createWriteStream, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, waitForLine, type Child } from '../../../demo/child-processes.js';

/** Where the chat worker processes connect, what they record to, and where they log. */
export interface ChatWorkerConfig {
  readonly address: string;
  readonly taskQueue: string;
  /** Store spec of the effect store (and the run stream, where the worker has one). */
  readonly store: string;
  readonly githubUrl: string;
  readonly approvalSecret: string;
  readonly markerSecret: string;
  /** A prebuilt workflow bundle (so a restart does not bundle again). */
  readonly workflowBundle?: string;
  /** Milliseconds per streamed word of the scripted model. */
  readonly tokenMs?: number;
  /** Folder of the logs (worker-<n>.log) and of the crash flag. */
  readonly logDir: string;
}

/**
 * Keeps one chat worker process running (examples/chat/dev/worker.ts, the same Node and loader
 * flags as this process): starts it, and when it dies (`kill -9 $(cat <logDir>/worker.pid)`, or a
 * test's SIGKILL) starts the next one, which picks the runs up where Temporal's retries put them.
 */
export class WorkerSupervisor {
  private current: Child | undefined;
  private started = 0;
  private stopping = false;
  private readonly readyWaiters: Array<() => void> = [];

  constructor(private readonly config: ChatWorkerConfig) {}

  /** Starts the first worker; resolves once it polls. */
  async start(): Promise<void> {
    rmSync(this.crashFlag, { force: true }); // armed by an earlier launch that did not use it
    await this.spawn();
  }

  /** The running worker's pid (undefined while none runs). */
  pid(): number | undefined {
    return this.current?.process.pid;
  }

  /** How many workers were started after the first. */
  restarts(): number {
    return Math.max(0, this.started - 1);
  }

  /** SIGKILLs the running worker: nothing it was doing is finished or recorded by it. */
  kill(): void {
    this.current?.process.kill('SIGKILL');
  }

  /**
   * Arms the crash window: the worker that posts the next comment SIGKILLs itself right after the
   * post, before the result is recorded (and the next worker's retry has to reconcile it).
   */
  crashAfterNextComment(): void {
    writeFileSync(this.crashFlag, 'armed\n');
  }

  /** True while the crash window is armed and no comment has used it yet. */
  crashArmed(): boolean {
    return existsSync(this.crashFlag);
  }

  private get crashFlag(): string {
    return join(this.config.logDir, 'crash-after-next-comment');
  }

  /** Resolves once a worker started after this call polls. */
  nextReady(): Promise<void> {
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** Stops the worker and does not restart it. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.stop(2_000);
  }

  private async spawn(): Promise<void> {
    const n = ++this.started;
    const { config } = this;
    const script = fileURLToPath(new URL('./worker.ts', import.meta.url));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: config.address,
      CHAT_TASK_QUEUE: config.taskQueue,
      CHAT_STORE: config.store,
      CHAT_GITHUB_URL: config.githubUrl,
      CHAMVI_APPROVAL_SECRET: config.approvalSecret,
      CHAT_MARKER_SECRET: config.markerSecret,
      ...(config.workflowBundle !== undefined ? { CHAT_WORKFLOW_BUNDLE: config.workflowBundle } : {}),
      ...(config.tokenMs !== undefined ? { CHAT_TOKEN_MS: String(config.tokenMs) } : {}),
      CHAT_CRASH_FLAG: this.crashFlag,
    };
    const loader = process.execArgv.some((a) => a.includes('tsx')) ? process.execArgv : ['--import', 'tsx'];
    const child = startChild(process.execPath, [...loader, script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(join(config.logDir, `worker-${n}.log`));
    child.process.stdout?.pipe(log, { end: false });
    child.process.stderr?.pipe(log, { end: false });
    this.current = child;
    let ready = false;
    void child.exited.then((how) => {
      log.end(`\nchat worker ${n} ended: ${String(how)}\n`);
      if (this.current === child) this.current = undefined;
      // Only a worker that did poll is replaced: one that dies while starting would die again.
      if (ready && !this.stopping) {
        void this.spawn().catch((error: unknown) => process.stderr.write(`chat: ${String(error)}\n`));
      }
    });
    await waitForLine(child, 'ready', 120_000);
    ready = true;
    // For `kill -9 $(cat <logDir>/worker.pid)`: the worker polling now.
    writeFileSync(join(config.logDir, 'worker.pid'), `${child.process.pid ?? ''}\n`);
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }
}
