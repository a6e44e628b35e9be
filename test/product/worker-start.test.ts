// What a worker does when it starts: it checks its effect store (a store that cannot be opened
// fails the start, naming it) and serves a health endpoint while it runs.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { createTimeSkippingEnvironment } from '../../testing/index.js';
import {
  createAgentWorker,
  EffectStoreUnavailableError,
  workerHealthFromEnv,
  type WorkerHealthReport,
} from '../../worker/index.js';
import { WorkerHealthError } from '../../worker/worker-health.js';
import { noter } from './fixtures/note-agents.js';

const scratch = mkdtempSync(join(tmpdir(), 'chamvi-worker-start-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const relativeToCwd = (path: string): string => relative(process.cwd(), path);

// Nothing listens here: a worker that got past the store check would fail to connect instead.
const NO_TEMPORAL = '127.0.0.1:1';

async function startError(options: Parameters<typeof createAgentWorker>[0]): Promise<Error> {
  return createAgentWorker(options).then(
    () => {
      throw new Error('the worker started');
    },
    (error: unknown) => error as Error,
  );
}

describe('a worker whose effect store cannot be opened does not start', () => {
  it('names the SQLite file by its absolute path', async () => {
    // A folder that can never be created: its parent is a file.
    writeFileSync(join(scratch, 'not-a-folder'), 'x');
    const relative = join(relativeToCwd(scratch), 'not-a-folder', 'effects.db');
    const error = await startError({ address: NO_TEMPORAL, taskQueue: 'start', agents: [noter], store: relative });
    expect(EffectStoreUnavailableError.isInstance(error)).toBe(true);
    expect(error.message).toContain(`SQLite file ${join(scratch, 'not-a-folder', 'effects.db')} cannot be opened`);
  });

  it('names a file that is no database by its absolute path', async () => {
    const path = join(scratch, 'garbage.db');
    writeFileSync(path, 'this is not an SQLite database, it is just text '.repeat(200));
    const error = await startError({ address: NO_TEMPORAL, taskQueue: 'start', agents: [noter], store: path });
    expect(error.name).toBe('EffectStoreUnavailableError');
    expect(error.message).toContain(`SQLite file ${path} cannot be opened`);
    expect(error.message).toContain('The worker was not started');
  });

  it('names a PostgreSQL server it cannot reach by its URL, password masked', async () => {
    const error = await startError({
      address: NO_TEMPORAL,
      taskQueue: 'start',
      agents: [noter],
      store: 'postgres://chamvi:s3cr3t-pw@127.0.0.1:1/effects',
    });
    expect(EffectStoreUnavailableError.isInstance(error)).toBe(true);
    expect(error.message).toContain('PostgreSQL postgres://chamvi:***@127.0.0.1:1/effects cannot be opened');
    expect(error.message).not.toContain('s3cr3t-pw');
  });
});

describe('the health endpoint', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await createTimeSkippingEnvironment();
  }, 60_000);
  afterAll(async () => env?.teardown());

  async function health(url: string): Promise<{ status: number; body: WorkerHealthReport } | 'no answer'> {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      return { status: res.status, body: (await res.json()) as WorkerHealthReport };
    } catch {
      return 'no answer';
    }
  }

  it('answers 200 while the worker polls its task queue, and nothing once it has stopped', async () => {
    let url: string | undefined;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue: 'health',
      agents: [noter],
      store: new MemoryEffectStore(),
      health: { port: 0, onListening: (u) => (url = u) },
    });
    expect(url).toBeUndefined(); // it listens when the run starts
    const during = await worker.runUntil(async () => {
      for (let i = 0; url === undefined && i < 500; i++) await new Promise((r) => setTimeout(r, 10));
      return url === undefined ? 'never listened' : health(url);
    });
    expect(during).toEqual({ status: 200, body: { status: 'ok', state: 'RUNNING', taskQueue: 'health' } });
    expect(worker.getState()).toBe('STOPPED');
    expect(await health(url ?? '')).toBe('no answer');
  }, 60_000);

  it('is asked for by CHAMVI_HEALTH_PORT and CHAMVI_HEALTH_HOST; a port that is no number fails the start', async () => {
    expect(workerHealthFromEnv({ CHAMVI_HEALTH_PORT: '8080', CHAMVI_HEALTH_HOST: '0.0.0.0' })).toEqual({
      port: 8080,
      host: '0.0.0.0',
    });
    expect(workerHealthFromEnv({ CHAMVI_HEALTH_PORT: '' })).toBeUndefined();
    const before = process.env['CHAMVI_HEALTH_PORT'];
    process.env['CHAMVI_HEALTH_PORT'] = 'eighty';
    try {
      const error = await startError({
        connection: env.nativeConnection,
        taskQueue: 'health',
        agents: [noter],
        store: new MemoryEffectStore(),
      });
      expect(WorkerHealthError.isInstance(error)).toBe(true);
      expect(error.message).toBe('CHAMVI_HEALTH_PORT="eighty" is not a TCP port; set it to a number from 0 to 65535.');
    } finally {
      if (before === undefined) delete process.env['CHAMVI_HEALTH_PORT'];
      else process.env['CHAMVI_HEALTH_PORT'] = before;
    }
  });
});
