// Real SIGKILL of a worker process right after the effect (attempt 1), for every strategy, on a
// Temporal dev server with two worker processes sharing one PostgreSQL table. The second process
// runs with its clock an hour ahead (Date.now faked): leases are on the database's clock.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JetStreamManager } from 'nats';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';
import { runGit } from '../../src/strategies/index.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { IdempotentTicketServer } from '../fixtures/idempotent-server.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { expected, NATS_URL, PG_URL, writeObservations } from './matrix.js';
import { startWorkerProcess, writeBundle } from './processes.js';
import { effectCounter, natsClient, OWNER, REPO, STRATEGIES, type Remotes } from './strategies.js';

const id = randomUUID().slice(0, 8);
const table = `rel_kill_${id}`;
const stream = `CHAMVI_KILL_${id}`;
let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;
let tickets: IdempotentTicketServer;
let jsm: JetStreamManager;
let dir: string;
let bundlePath: string;
let remotes: Remotes;
const nats = natsClient(NATS_URL);
const rows: unknown[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chamvi-kill-'));
  [env, bundlePath] = await Promise.all([createDevServerEnvironment(), writeBundle(dir)]);
  github = await new LocalGitHubServer().start();
  tickets = await new IdempotentTicketServer().start();
  const gitRemote = join(dir, 'remote.git');
  await runGit(['init', '--quiet', '--bare', '--initial-branch=main', gitRemote], { cwd: dir });
  jsm = await (await nats.get()).jetstreamManager();
  await jsm.streams.add({ name: stream, subjects: [`chamvi.kill.${id}.>`], duplicate_window: 120_000_000_000 });
  remotes = {
    githubUrl: github.url,
    ticketsUrl: tickets.url,
    natsServers: NATS_URL,
    natsSubject: `chamvi.kill.${id}.notify`,
    gitRemote,
    gitWorkDir: join(dir, 'work.git'),
  };
}, 120_000);

afterAll(async () => {
  writeObservations('process-kill', rows);
  const store = new PostgresEffectStore({ connectionString: PG_URL, table });
  await store.close();
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS public.${table}`);
  await client.end();
  await jsm?.streams.delete(stream).catch(() => undefined);
  await nats.close();
  await tickets?.stop();
  await github?.stop();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

describe('two worker processes on one PostgreSQL table, the first SIGKILLed right after the effect', () => {
  it.each(STRATEGIES.map((s) => [s]))(
    'strategy %s',
    async (strategy) => {
      const natsSeen: string[] = [];
      const counter = effectCounter({
        createIssue: () => github.tracker.createIssue(OWNER, REPO, { title: 'kill', login: 'alice' }).number,
        comments: (issue) => github.tracker.listComments(OWNER, REPO, issue)?.length ?? 0,
        tickets: (title) => tickets.tickets.filter((t) => t.title === title).length,
        natsMessages: async (text) => {
          const info = await jsm.streams.info(stream);
          natsSeen.length = 0;
          for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
            const m = await jsm.streams.getMessage(stream, { seq });
            natsSeen.push((JSON.parse(new TextDecoder().decode(m.data)) as { text: string }).text);
          }
          return natsSeen.filter((t) => t === text).length;
        },
        gitRemote: remotes.gitRemote,
      });
      const taskQueue = `kill-${randomUUID()}`;
      const common = {
        TEMPORAL_ADDRESS: env.address,
        TASK_QUEUE: taskQueue,
        REMOTES: JSON.stringify({ ...remotes, gitWorkDir: join(dir, `work-${taskQueue}.git`) }),
        STORE: PG_URL,
        STORE_TABLE: table,
        BUNDLE_PATH: bundlePath,
      };
      const doomed = await startWorkerProcess({
        ...common,
        CHAMVI_FAULTS: JSON.stringify([{ point: 'after-effect', mode: 'kill', attempt: 1 }]),
      });
      const call = counter.plan(strategy, randomUUID());
      const handle = await startAgentRun(env.client, { agent: strategy, prompt: JSON.stringify(call), taskQueue });
      expect(await doomed.exited).toBe('SIGKILL');
      const afterKill = await counter.count(strategy, call);
      const survivor = await startWorkerProcess({ ...common, CLOCK_SKEW_MS: String(3_600_000) });
      try {
        const output = await handle.result();
        const count = await counter.count(strategy, call);
        const report = output.effects[0];
        const want = expected(strategy, 'after-effect');
        rows.push({ strategy, afterKill, count, outcome: report?.outcome, attempts: report?.attempts });
        expect(afterKill).toBe(1);
        expect({ count, outcome: report?.outcome, attempts: report?.attempts }).toEqual({
          count: want.count,
          outcome: want.outcome,
          attempts: 2,
        });
      } finally {
        await survivor.kill();
      }
    },
    60_000,
  );
});
