// The crash-injection matrix: every fault point x every strategy, on one worker (SQLite store) or
// two workers of one task queue each with its own PostgresEffectStore on one table. One Temporal
// dev server, one prebuilt workflow bundle, one set of workers per file; the six strategies of a
// fault point run at once. Each case's name says which mechanism it stands for.
//
// Two workers also run the zombie cases: attempt 1 stalls past its start-to-close timeout (after
// its remote read, or after its effect) while the retry runs on the other worker, and goes on
// only once that retry was refused the key or went past the claim. Those cases stand for the
// claim: with claims off the retry applies beside the zombie or answers from the remote.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker, WorkflowBundle } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { JetStreamManager } from 'nats';
import type { ClaimRequest, ClaimResult } from '../../src/stores/effect-store.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';
import { runGit } from '../../src/strategies/index.js';
import { FaultInjector, type FaultHit, type FaultRule } from '../../testing/fault-injector.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { IdempotentTicketServer } from '../fixtures/idempotent-server.js';
import { runAll, summarizeActivities } from '../../testing/run-agent-under-test.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import { firstOrTimeout } from '../fixtures/first-or-timeout.js';
import {
  expected,
  expectedZombie,
  FAULT_POINTS,
  guardOf,
  NATS_URL,
  PG_URL,
  writeObservations,
  ZOMBIE_POINTS,
  type MatrixPoint,
  type Observation,
  type ZombiePoint,
} from './expectations.js';
import {
  effectCounter,
  FAST_TOOL_OPTIONS,
  natsClient,
  OWNER,
  REPO,
  STRATEGIES,
  strategyAgents,
  type EffectCounter,
  type PlannedCall,
  type Remotes,
  type Strategy,
} from './strategies.js';

export * from './expectations.js';

/** Defines the matrix tests of one topology in the calling test file. */
export function defineMatrix(topology: 'one worker' | 'two workers'): void {
  const id = randomUUID().slice(0, 8);
  const table = `rel_matrix_${id}`;
  const stream = `CHAMVI_REL_${id}`;
  const subject = `chamvi.rel.${id}.notify`;
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundle;
  let github: LocalGitHubServer;
  let tickets: IdempotentTicketServer;
  let dir: string;
  let jsm: JetStreamManager;
  const nats = natsClient(NATS_URL);
  const stores: ManagedEffectStore[] = [];
  const observations = new Map<string, Observation>();
  const natsSeen = new Map<number, string>();
  let counter: EffectCounter;
  let gitRemote: string;
  const remotesOf = (worker: string): Remotes => ({
    githubUrl: github.url,
    ticketsUrl: tickets.url,
    natsServers: NATS_URL,
    natsSubject: subject,
    gitRemote,
    gitWorkDir: join(dir, `work-${worker}.git`),
  });

  beforeAll(async () => {
    // A dev server, not the time-skipping one: with real remotes (git, NATS) under CI load the
    // time-skipping server fast-forwards the heartbeat timeout of a slow but live attempt (a
    // spurious retry), and its clock lock comes unbalanced with two workers and concurrent runs.
    // Retries are 20 ms apart, so nothing needs skipping.
    [env, bundle] = await Promise.all([createDevServerEnvironment(), bundleTestWorkflows()]);
    github = await new LocalGitHubServer().start();
    tickets = await new IdempotentTicketServer().start();
    dir = mkdtempSync(join(tmpdir(), 'chamvi-matrix-'));
    gitRemote = join(dir, 'remote.git');
    await runGit(['init', '--quiet', '--bare', '--initial-branch=main', gitRemote], { cwd: dir });
    jsm = await (await nats.get()).jetstreamManager();
    await jsm.streams.add({ name: stream, subjects: [`chamvi.rel.${id}.>`], duplicate_window: 120_000_000_000 });

    const workerCount = topology === 'one worker' ? 1 : 2;
    const faults = new FaultInjector(
      FAULT_POINTS.map((point) => ({
        point,
        attempt: 1,
        times: Infinity,
        when: (hit) => hit.ctx?.state['faultAt'] === hit.point,
      })),
    );
    const taskQueue = `matrix-${id}`;
    const workers: Worker[] = [];
    for (let i = 0; i < workerCount; i++) {
      const store =
        topology === 'one worker'
          ? new SqliteEffectStore(join(dir, 'effects.db'))
          : new PostgresEffectStore({ connectionString: PG_URL, table });
      stores.push(store);
      workers.push(
        await createAgentWorker({
          connection: env.nativeConnection,
          taskQueue,
          agents: faults.wrapAgents(strategyAgents(remotesOf(String(i)), nats.get)),
          store: faults.wrapStore(store),
          // Two workers of one task queue in one process need distinct deployment versions (SDK 1.23
          // refuses otherwise); versioning stays off, so both get every task.
          workerOptions: {
            workflowBundle: bundle,
            workerDeploymentOptions: {
              version: { deploymentName: `matrix-${id}`, buildId: `worker-${i}` },
              useWorkerVersioning: false,
            },
          },
        }),
      );
    }

    counter = effectCounter({
      createIssue: () => github.tracker.createIssue(OWNER, REPO, { title: 'matrix', login: 'alice' }).number,
      comments: (issue) => github.tracker.listComments(OWNER, REPO, issue)?.length ?? 0,
      tickets: (title) => tickets.tickets.filter((t) => t.title === title).length,
      natsMessages: async (text) => {
        const info = await jsm.streams.info(stream);
        for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
          if (natsSeen.has(seq)) continue;
          const m = await jsm.streams.getMessage(stream, { seq });
          natsSeen.set(seq, (JSON.parse(new TextDecoder().decode(m.data)) as { text: string }).text);
        }
        return [...natsSeen.values()].filter((t) => t === text).length;
      },
      gitRemote,
    });

    const runCase = async (strategy: Strategy, point: MatrixPoint): Promise<void> => {
      const call: PlannedCall = counter.plan(strategy, randomUUID());
      const handle = await startAgentRun(env.client, {
        agent: strategy,
        prompt: JSON.stringify(call),
        taskQueue,
        state: { faultAt: point },
      });
      const output = await handle.result();
      const activities = await summarizeActivities(handle);
      const report = output.effects[0];
      const stored = report === undefined ? undefined : await stores[0]?.get(report.key);
      observations.set(`${strategy}|${point}`, {
        topology,
        strategy,
        point,
        count: await counter.count(strategy, call),
        outcome: report?.outcome ?? `none (${output.text})`,
        attempts: report?.attempts ?? 0,
        recordPending: report?.recordPending === true,
        storedOrigin: stored?.origin,
        recordEffectActivities: activities.filter((a) => a.type === 'chamvi.recordEffect').length,
        history: activities
          .map((a) => `${a.type}#${a.attempt} ${a.status}${a.failure ? ` (${a.failure})` : ''}`)
          .join('; '),
      });
    };

    await runAll(workers, async () => {
      for (const point of ['no fault', ...FAULT_POINTS] as MatrixPoint[]) {
        await Promise.all(STRATEGIES.map((strategy) => runCase(strategy, point)));
      }
    });
    writeObservations(`matrix-${topology.replace(' ', '-')}`, [...observations.values()]);
  }, 180_000);

  if (topology === 'two workers') defineZombieCases();

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    if (topology === 'two workers') {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP TABLE IF EXISTS public.${table}`);
      await client.end();
    }
    await jsm?.streams.delete(stream).catch(() => undefined);
    await nats.close();
    await tickets?.stop();
    await github?.stop();
    await env?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const cases = (['no fault', ...FAULT_POINTS] as MatrixPoint[]).flatMap((point) =>
    STRATEGIES.map((strategy) => [point, strategy, expected(strategy, point)] as const),
  );
  it.each(cases.map(([point, strategy, want]) => [point, strategy, guardOf(strategy, point), want] as const))(
    `${topology} · fault %s · strategy %s · %s`,
    (point, strategy, _guard, want) => {
      const seen = observations.get(`${strategy}|${point}`);
      expect(seen).toBeDefined();
      expect({
        count: seen?.count,
        outcome: seen?.outcome,
        attempts: seen?.attempts,
        recordPending: seen?.recordPending,
        storedOrigin: seen?.storedOrigin,
        recordEffectActivities: seen?.recordEffectActivities,
      }).toEqual({
        count: want.count,
        outcome: want.outcome,
        attempts: want.attempts,
        recordPending: want.recordPending,
        storedOrigin: want.outcome,
        recordEffectActivities: want.recordPending ? 1 : 0,
      });
    },
  );

  /**
   * The zombie cases, on a task queue of their own. Worker 0 runs alone first, with one activity
   * slot per case, until every first attempt is stalled at its point; only then does worker 1
   * start, so every retry runs on worker 1, against another store instance (no in-process
   * sharing with the zombie, only the claim). A zombie goes on once its own deadline has passed
   * (its signal aborted) and its retry was refused the key by the store later than the zombie's
   * lease would have run out unrenewed since that deadline, or went past the claim (reached the
   * effect or the record).
   */
  function defineZombieCases(): void {
    const TIMEOUT_MS = 5_000;
    // The effect call's lease: the shorter of the heartbeat timeout and the start-to-close timeout.
    // Renewed every third of it, so the zombie's renewals outlast a 2.6 s stall of this loaded process.
    const LEASE_MS = 4_000;
    const zombieCases = ZOMBIE_POINTS.flatMap((point) => STRATEGIES.map((strategy) => ({ point, strategy })));
    const zombieObservations = new Map<string, Observation & { storedOrigin: string | undefined }>();

    beforeAll(async () => {
      const trackers = new Map<string, ZombieTracker>();
      const trackerOf = (key: string): ZombieTracker => {
        let tracker = trackers.get(key);
        if (tracker === undefined) trackers.set(key, (tracker = zombieTracker()));
        return tracker;
      };
      const allInside = countdown(zombieCases.length);
      const zombieAt = (hit: FaultHit): unknown => hit.ctx?.state['zombieAt'];
      const faults = new FaultInjector([
        {
          point: 'before-store-read',
          attempt: 1,
          times: Infinity,
          when: (hit) => zombieAt(hit) !== undefined,
          mode: (hit) => {
            trackerOf(hit.key).startedAt = performance.now();
          },
        },
        ...ZOMBIE_POINTS.map((point): FaultRule => ({
          point,
          attempt: 1,
          times: Infinity,
          when: (hit) => zombieAt(hit) === hit.point,
          mode: async (hit) => {
            const tracker = trackerOf(hit.key);
            allInside.tick();
            const signal = hit.ctx?.run.signal;
            await Promise.all([
              sleep(tracker.startedAt + TIMEOUT_MS + 50 - performance.now()),
              // The attempt's own deadline: its clock starts a little after startedAt, later on a loaded machine.
              firstOrTimeout(
                30_000,
                new Promise((resolve) =>
                  signal === undefined || signal.aborted
                    ? resolve(undefined)
                    : signal.addEventListener('abort', resolve, { once: true }),
                ),
              ),
              firstOrTimeout(30_000, tracker.retryRefused.promise, tracker.retryPast.promise),
            ]);
          },
        })),
        // The retry got past the claim: it reached the effect or the record.
        ...(['before-effect', 'before-record'] as const).map((point): FaultRule => ({
          point,
          times: Infinity,
          when: (hit) => zombieAt(hit) !== undefined && (hit.attempt ?? 1) > 1,
          mode: (hit) => trackerOf(hit.key).retryPast.resolve(),
        })),
      ]);
      /** A store instance that tells a retry's tracker when the key was refused to it (another attempt holds it). */
      class WatchedStore extends PostgresEffectStore {
        override async claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
          const answer = await super.claim(key, request);
          const tracker = trackerOf(key);
          const deadline = tracker.startedAt + TIMEOUT_MS;
          if (answer.status === 'busy' && (request.attempt ?? 1) > 1 && performance.now() >= deadline + LEASE_MS + 250)
            tracker.retryRefused.resolve();
          return answer;
        }
      }
      const zombieStores = [0, 1].map(() => new WatchedStore({ connectionString: PG_URL, table }));
      stores.push(...zombieStores);
      const taskQueue = `matrix-zombie-${id}`;
      const toolOptions = { ...FAST_TOOL_OPTIONS, heartbeatTimeout: LEASE_MS, startToCloseTimeout: TIMEOUT_MS };
      const [first, second] = await Promise.all(
        [0, 1].map((i) =>
          createAgentWorker({
            connection: env.nativeConnection,
            taskQueue,
            agents: faults.wrapAgents(
              strategyAgents(remotesOf(`zombie-${i}`), nats.get).map((r) => ({
                ...r,
                tools: { effect: toolOptions },
              })),
            ),
            store: faults.wrapStore(zombieStores[i]!),
            workerOptions: {
              workflowBundle: bundle,
              ...(i === 0 ? { maxConcurrentActivityTaskExecutions: zombieCases.length } : {}),
              workerDeploymentOptions: {
                version: { deploymentName: `matrix-zombie-${id}`, buildId: `worker-${i}` },
                useWorkerVersioning: false,
              },
            },
          }),
        ),
      );
      // Worker 0 stops only once its zombies returned, so the remotes are counted after the last late effect.
      const ran = await first!.runUntil(async () => {
        const started = await Promise.all(
          zombieCases.map(async ({ point, strategy }) => {
            const call = counter.plan(strategy, randomUUID());
            const handle = await startAgentRun(env.client, {
              agent: strategy,
              prompt: JSON.stringify(call),
              taskQueue,
              state: { zombieAt: point },
            });
            return { point, strategy, call, handle };
          }),
        );
        await firstOrTimeout(60_000, allInside.done); // a zombie that never got there fails its case
        return second!.runUntil(
          Promise.all(
            started.map(async (run) => {
              const output = await run.handle.result();
              const report = output.effects[0];
              const stored = report === undefined ? undefined : await zombieStores[1]!.get(report.key);
              const activities = await summarizeActivities(run.handle);
              return { ...run, report, output, stored, activities };
            }),
          ),
        );
      });
      for (const run of ran) {
        zombieObservations.set(`${run.strategy}|${run.point}`, {
          topology: 'two workers, zombie',
          strategy: run.strategy,
          point: run.point,
          count: await counter.count(run.strategy, run.call),
          outcome: run.report?.outcome ?? `none (${run.output.text})`,
          attempts: run.report?.attempts ?? 0,
          recordPending: run.report?.recordPending === true,
          storedOrigin: run.stored?.origin,
          recordEffectActivities: run.activities.filter((a) => a.type === 'chamvi.recordEffect').length,
          history: run.activities
            .map((a) => `${a.type}#${a.attempt} ${a.status}${a.failure ? ` (${a.failure})` : ''}`)
            .join('; '),
        });
      }
      writeObservations('matrix-zombie', [...zombieObservations.values()]);
    }, 180_000);

    it.each(
      zombieCases.map(({ point, strategy }) => [point, strategy, expectedZombie(strategy, point).guard] as const),
    )('two workers · zombie at %s · strategy %s · %s', (point: ZombiePoint, strategy: Strategy) => {
      const seen = zombieObservations.get(`${strategy}|${point}`);
      const want = expectedZombie(strategy, point);
      expect(seen).toBeDefined();
      expect({
        count: seen?.count,
        outcome: seen?.outcome,
        storedOrigin: seen?.storedOrigin,
        retried: (seen?.attempts ?? 0) >= want.minAttempts,
      }).toEqual({ count: want.count, outcome: want.outcome, storedOrigin: want.storedOrigin, retried: true });
    });
  }
}

interface ZombieTracker {
  startedAt: number;
  readonly retryRefused: Deferred;
  readonly retryPast: Deferred;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function zombieTracker(): ZombieTracker {
  return { startedAt: performance.now(), retryRefused: deferred(), retryPast: deferred() };
}

/** Resolves `done` after `n` ticks. */
function countdown(n: number): { tick(): void; readonly done: Promise<void> } {
  const all = deferred();
  let left = n;
  return {
    tick: () => {
      if (--left === 0) all.resolve();
    },
    done: all.promise,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
