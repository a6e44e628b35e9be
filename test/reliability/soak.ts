// Reliability soak: N concurrent agent runs x 5 effect calls on one Temporal dev server, two worker
// processes sharing one PostgreSQL table, random SIGKILLs of the workers (each restarted at once)
// (plus, with a small probability, a worker killing itself right after an effect: the crash window)
// and store hiccups (failing store calls). Asserts zero duplicate and zero lost effects, and
// reports throughput and run latency.
//
//   npm run soak -- [--runs 200] [--kill-every-ms 3000] [--hiccups 0.02] [--limit-s 600]
//   (node --import tsx test/reliability/soak.ts ...)
//
// A short form runs in CI: test/reliability/soak.test.ts. It lives beside the reliability tests,
// whose worker processes and strategies it runs; bench/ holds benchmarks only.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { findEffectMarkers } from '../../src/index.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { startWorkerProcess, writeBundle, type WorkerProcess } from './processes.js';
import { OWNER, REPO } from './strategies.js';

export interface SoakOptions {
  /** Concurrent agent runs (each makes 5 effect calls). Default 200. */
  readonly runs?: number;
  /** A random worker is SIGKILLed (and restarted) this often, in ms; 0 for none. Default 3000. */
  readonly killEveryMs?: number;
  /** Probability that a store call of a worker fails. Default 0.02. */
  readonly hiccups?: number;
  /** Probability that a worker kills itself right after an effect (once per process). Default 0.01. */
  readonly selfKill?: number;
  /** Give up (and fail) after this long, in ms. Default 600 000. */
  readonly limitMs?: number;
  readonly pgUrl?: string;
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

export interface SoakReport {
  readonly runs: number;
  readonly effectCalls: number;
  readonly completedRuns: number;
  readonly duplicates: number;
  readonly lost: number;
  readonly kills: number;
  /** Workers that killed themselves right after an effect. */
  readonly selfKills: number;
  /** Effect calls answered by a retry (attempt > 1), and how each was answered. */
  readonly retriedCalls: number;
  readonly outcomes: Record<string, number>;
  readonly recordPending: number;
  readonly wallMs: number;
  readonly runsPerSecond: number;
  readonly effectsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

const CALLS_PER_RUN = 5;

export async function runSoak(options: SoakOptions = {}): Promise<SoakReport> {
  const runs = options.runs ?? 200;
  const killEveryMs = options.killEveryMs ?? 3000;
  const hiccups = options.hiccups ?? 0.02;
  const limitMs = options.limitMs ?? 600_000;
  const pgUrl = options.pgUrl ?? process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
  const log = options.log ?? (() => undefined);
  const table = `soak_${randomUUID().slice(0, 8)}`;
  const dir = mkdtempSync(join(tmpdir(), 'chamvi-soak-'));
  const [env, bundlePath] = await Promise.all([createDevServerEnvironment(), writeBundle(dir)]);
  const github = await new LocalGitHubServer().start();
  const taskQueue = `soak-${randomUUID()}`;
  const workerEnv = {
    TEMPORAL_ADDRESS: env.address,
    TASK_QUEUE: taskQueue,
    AGENTS: 'soak',
    REMOTES: JSON.stringify({ githubUrl: github.url, natsServers: '127.0.0.1:4222' }),
    STORE: pgUrl,
    STORE_TABLE: table,
    BUNDLE_PATH: bundlePath,
    STORE_HICCUPS: String(hiccups),
    CHAMVI_FAULTS: JSON.stringify([{ point: 'after-effect', mode: 'kill', probability: options.selfKill ?? 0.01 }]),
  };
  const workers: Array<WorkerProcess | undefined> = [];
  let kills = 0;
  let selfKills = 0;
  const spawning = new Set<Promise<void>>();
  let stopping = false;
  let killer: NodeJS.Timeout | undefined;
  try {
    // A worker that dies on its own (a self-kill after an effect) is restarted at once.
    const spawnSlot = (slot: number): Promise<void> => {
      if (stopping) return Promise.resolve();
      const started = startSlot(slot);
      spawning.add(started);
      void started.finally(() => spawning.delete(started)).catch(() => undefined);
      return started;
    };
    const startSlot = async (slot: number): Promise<void> => {
      const worker = await startWorkerProcess(workerEnv);
      if (stopping) {
        await worker.kill('SIGTERM');
        return;
      }
      workers[slot] = worker;
      void worker.exited.then(() => {
        if (stopping || workers[slot] !== worker) return;
        selfKills++;
        workers[slot] = undefined;
        log(`worker ${slot} died on its own (self-kill ${selfKills})`);
        spawnSlot(slot).catch((error: unknown) => log(`restart of worker ${slot} failed: ${String(error)}`));
      });
    };
    await Promise.all([spawnSlot(0), spawnSlot(1)]);
    if (killEveryMs > 0) {
      const killOne = async (): Promise<void> => {
        const slot = Math.floor(Math.random() * workers.length);
        const victim = workers[slot];
        if (victim === undefined || stopping) return;
        workers[slot] = undefined;
        await victim.kill('SIGKILL');
        kills++;
        log(`killed worker ${slot} (kill ${kills})`);
        if (!stopping) await spawnSlot(slot);
      };
      const tick = (delay: number): void => {
        killer = setTimeout(
          () =>
            void killOne()
              .catch((error: unknown) => log(`kill/restart failed: ${String(error)}`))
              .finally(() => !stopping && tick(killEveryMs * (0.5 + Math.random()))),
          delay,
        );
      };
      tick(Math.min(1000, killEveryMs)); // the first kill lands while the runs are in flight
    }

    const started = Date.now();
    const latencies: number[] = [];
    const outputs = await withLimit(
      limitMs,
      Promise.all(
        Array.from({ length: runs }, async () => {
          const issue = github.tracker.createIssue(OWNER, REPO, { title: 'soak', login: 'alice' }).number;
          const t0 = Date.now();
          const handle = await startAgentRun(env.client, {
            agent: 'soak',
            prompt: String(issue),
            taskQueue,
            activityOptions: {
              modelStep: {
                heartbeatTimeout: '2 seconds',
                retry: { initialInterval: '100 ms', maximumInterval: '1 second', maximumAttempts: 50 },
              },
              store: {
                startToCloseTimeout: '5 seconds',
                retry: { initialInterval: '100 ms', maximumInterval: '1 second' },
              },
            },
          });
          const output = await handle.result();
          latencies.push(Date.now() - t0);
          if (latencies.length % 25 === 0) log(`${latencies.length}/${runs} runs done`);
          return { issue, output };
        }),
      ),
    );
    const wallMs = Date.now() - started;

    let duplicates = 0;
    let lost = 0;
    let retriedCalls = 0;
    let recordPending = 0;
    const outcomes: Record<string, number> = {};
    for (const { issue, output } of outputs) {
      const comments = github.tracker.listComments(OWNER, REPO, issue) ?? [];
      for (let n = 0; n < CALLS_PER_RUN; n++) {
        const key = `${output.runId}:post:${issue}:${n}`;
        const applied = comments.filter((c) => findEffectMarkers(c.body ?? '').includes(key)).length;
        if (applied === 0) lost++;
        if (applied > 1) duplicates += applied - 1;
      }
      if (comments.length !== CALLS_PER_RUN) log(`issue ${issue}: ${comments.length} comments`);
      for (const e of output.effects) {
        outcomes[e.outcome] = (outcomes[e.outcome] ?? 0) + 1;
        if (e.attempts > 1) retriedCalls++;
        if (e.recordPending === true) recordPending++;
      }
      if (output.effects.length !== CALLS_PER_RUN) lost += CALLS_PER_RUN - output.effects.length;
    }
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? 0;
    return {
      runs,
      effectCalls: runs * CALLS_PER_RUN,
      completedRuns: outputs.length,
      duplicates,
      lost,
      kills,
      selfKills,
      retriedCalls,
      outcomes,
      recordPending,
      wallMs,
      runsPerSecond: runs / (wallMs / 1000),
      effectsPerSecond: (runs * CALLS_PER_RUN) / (wallMs / 1000),
      p50Ms: pct(50),
      p99Ms: pct(99),
      maxMs: latencies[latencies.length - 1] ?? 0,
    };
  } finally {
    stopping = true;
    await Promise.allSettled([...spawning]); // restarts in flight finish (and stop) before the cleanup
    if (killer !== undefined) clearTimeout(killer);
    await Promise.all(workers.map((w) => (w === undefined ? Promise.resolve(null) : w.kill('SIGTERM'))));
    await github.stop();
    await env.teardown();
    await dropTable(pgUrl, table);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function withLimit<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`soak: not done after ${ms} ms (runs lost or stuck)`)), ms);
  });
  try {
    return await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}

async function dropTable(pgUrl: string, table: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS public.${table}`);
  await client.end();
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const report = await runSoak({
    runs: arg('runs', 200),
    killEveryMs: arg('kill-every-ms', 3000),
    hiccups: arg('hiccups', 0.02),
    limitMs: arg('limit-s', 600) * 1000,
    log: (line) => console.log(`[soak] ${line}`),
  });
  console.log(JSON.stringify(report, null, 2));
  if (report.duplicates !== 0 || report.lost !== 0) {
    console.error(`soak FAILED: ${report.duplicates} duplicate(s), ${report.lost} lost effect(s)`);
    process.exit(1);
  }
  process.exit(0);
}
