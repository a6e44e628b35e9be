// The crash-injection matrix: every fault point x every strategy, on one worker (SQLite store) or
// two workers of one task queue each with its own PostgresEffectStore on one table. One Temporal
// dev server, one prebuilt workflow bundle, one set of workers per file; the six strategies of a
// fault point run at once.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker, WorkflowBundle } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JetStreamManager } from 'nats';
import { PostgresEffectStore, runGit, SqliteEffectStore, type ManagedEffectStore } from '../../src/index.js';
import { FaultInjector } from '../../testing/fault-injector.js';
import { LocalGitHubServer } from '../../testing/github/index.js';
import { IdempotentTicketServer } from '../../testing/http/idempotent-server.js';
import { runAll, summarizeActivities } from '../../testing/run-agent-under-test.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker, startAgentRun } from '../../worker/index.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import {
  expected,
  FAULT_POINTS,
  NATS_URL,
  PG_URL,
  writeObservations,
  type MatrixPoint,
  type Observation,
} from './expectations.js';
import {
  effectCounter,
  natsClient,
  OWNER,
  REPO,
  STRATEGIES,
  strategyAgents,
  type PlannedCall,
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

  beforeAll(async () => {
    // A dev server, not the time-skipping one: with real remotes (git, NATS) under CI load the
    // time-skipping server fast-forwards the heartbeat timeout of a slow but live attempt (a
    // spurious retry), and its clock lock comes unbalanced with two workers and concurrent runs.
    // Retries are 20 ms apart, so nothing needs skipping.
    [env, bundle] = await Promise.all([createDevServerEnvironment(), bundleTestWorkflows()]);
    github = await new LocalGitHubServer().start();
    tickets = await new IdempotentTicketServer().start();
    dir = mkdtempSync(join(tmpdir(), 'chamvi-matrix-'));
    const gitRemote = join(dir, 'remote.git');
    await runGit(['init', '--quiet', '--bare', '--initial-branch=main', gitRemote], { cwd: dir });
    jsm = await (await nats.get()).jetstreamManager();
    await jsm.streams.add({ name: stream, subjects: [`chamvi.rel.${id}.>`], duplicate_window: 120_000_000_000 });

    const workerCount = topology === 'one worker' ? 1 : 2;
    const faults = new FaultInjector(
      FAULT_POINTS.map((point) => ({
        point,
        attempt: 1,
        times: Infinity,
        when: (hit) => (hit.input?.state as { faultAt?: string } | undefined)?.faultAt === hit.point,
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
      const remotes = {
        githubUrl: github.url,
        ticketsUrl: tickets.url,
        natsServers: NATS_URL,
        natsSubject: subject,
        gitRemote,
        gitWorkDir: join(dir, `work-${i}.git`),
      };
      workers.push(
        await createAgentWorker({
          connection: env.nativeConnection,
          taskQueue,
          agents: strategyAgents(remotes, nats.get),
          store,
          hooks: faults.hooks,
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

    const counter = effectCounter({
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
  it.each(cases)(`${topology} · fault %s · strategy %s`, (point, strategy, want) => {
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
  });
}
