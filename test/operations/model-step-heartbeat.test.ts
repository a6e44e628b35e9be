import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MODEL_STEP_OPTIONS } from '../../common/index.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { spawnWorker, stopSpawnedWorkers } from './fixtures/spawn-worker.js';

const SLOW_MODEL_WORKER = fileURLToPath(new URL('./fixtures/slow-model-worker.ts', import.meta.url));

let env: TestWorkflowEnvironment;
let dir: string;

/** An SQLite store the workers of one test share (the run's conversation lives there too). */
const store = (): string => `sqlite:${join(dir, `effects-${randomUUID()}.db`)}`;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-heartbeat-'));
}, 120_000);

afterAll(async () => {
  await stopSpawnedWorkers();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

describe('model steps heartbeat, so a dead worker is noticed within the heartbeat timeout', () => {
  it('a worker SIGKILLed during a slow model step is retried elsewhere after the heartbeat timeout, not the 5 min start-to-close timeout', async () => {
    const taskQueue = `slow-model-${randomUUID()}`;
    const common = { TEMPORAL_ADDRESS: env.address, TASK_QUEUE: taskQueue, MODEL_DELAY_MS: '9000', STORE: store() };
    const doomed = await spawnWorker(SLOW_MODEL_WORKER, common);
    // Each model call takes 9 s, three times the heartbeat timeout: only heartbeats keep it alive. (A 1 s
    // heartbeat timeout made heartbeats of a loaded machine miss it, and every attempt time out.)
    const handle = await startAgentRun(env.client, {
      agent: 'ponderer',
      prompt: 'Take your time.',
      taskQueue,
      activityOptions: { modelStep: { heartbeatTimeout: '3 seconds', retry: { initialInterval: '100 ms' } } },
    });
    await doomed.printed(/model call 1/);
    const survivor = await spawnWorker(SLOW_MODEL_WORKER, common);
    try {
      const retried = survivor.printed(/model call 1/).then(() => Date.now());
      doomed.process.kill('SIGKILL');
      const killedAt = Date.now();
      expect(await doomed.exited).toBe('SIGKILL');
      const result = await handle.result();
      const finished = Date.now() - killedAt;
      expect(result.text).toBe('Slow but done.');
      // The retry starts once the heartbeat timeout (3 s) has passed: far below 5 minutes.
      const restarted = (await retried) - killedAt;
      expect(restarted).toBeLessThan(10_000);
      // + the survivor's slow call (9 s) + the next workflow task (the dead worker's sticky queue
      // times out after 1 s in these workers) + slack.
      expect(finished).toBeLessThan(30_000);
      process.stdout.write(
        `model step after SIGKILL: retried ${restarted} ms after the kill, run finished after ${finished} ms\n`,
      );
    } finally {
      await survivor.stop();
    }
    // Two worker processes start (tsx compiles each): on a loaded machine that alone can take a minute.
  }, 150_000);

  it('the model step is scheduled with a heartbeat timeout by default (30 s, like the tools)', async () => {
    expect(DEFAULT_MODEL_STEP_OPTIONS.heartbeatTimeout).toBe('30 seconds');
    const taskQueue = `slow-model-${randomUUID()}`;
    const worker = await spawnWorker(SLOW_MODEL_WORKER, {
      TEMPORAL_ADDRESS: env.address,
      TASK_QUEUE: taskQueue,
      MODEL_DELAY_MS: '10',
      STORE: store(),
    });
    try {
      const handle = await startAgentRun(env.client, { agent: 'ponderer', prompt: 'Quick.', taskQueue });
      await handle.result();
      const events = (await handle.fetchHistory()).events ?? [];
      const scheduled = events
        .map((e) => e.activityTaskScheduledEventAttributes)
        .find((a) => a?.activityType?.name === 'chamvi.modelStep');
      expect(Number(scheduled?.heartbeatTimeout?.seconds ?? 0)).toBe(30);
    } finally {
      await worker.stop();
    }
  }, 60_000);
});
