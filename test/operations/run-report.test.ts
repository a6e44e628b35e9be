import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEffectStore, type ManagedEffectStore } from '../../src/stores/index.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { agentProgressQuery } from '../../common/agent-progress.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { runCli } from '../product/run-cli.js';
import { NOTIFY_ATTEMPTS, reporter } from './fixtures/report-agents.js';

let env: TestWorkflowEnvironment;
let dir: string;
let store: ManagedEffectStore;
let storeSpec: string;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `report-${randomUUID()}`;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-report-'));
  storeSpec = `sqlite:${join(dir, 'effects.db')}`;
  store = createEffectStore(storeSpec);
  worker = await createAgentWorker({ connection: env.nativeConnection, taskQueue, agents: [reporter], store });
  running = worker.run();
}, 120_000);

afterAll(async () => {
  if (worker !== undefined) {
    worker.shutdown();
    await running;
  }
  await store?.close();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

describe("the run's report lists every effect call, failed and denied ones too", () => {
  it('result.effects and the progress query list the executed, the failed (last error, attempts) and the denied call', async () => {
    const handle = await startAgentRun(env.client, { agent: 'reporter', prompt: 'go', taskQueue });
    const result = await handle.result();
    expect(result.text).toBe('Done, mostly.');
    expect(result.effects).toHaveLength(3);
    expect(result.effects).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ toolName: 'note', outcome: 'executed', attempts: 1 }),
        expect.objectContaining({
          toolName: 'notify',
          outcome: 'failed',
          attempts: NOTIFY_ATTEMPTS,
          error: expect.objectContaining({ message: expect.stringMatching(/ECONNREFUSED/) }),
        }),
        expect.objectContaining({
          toolName: 'erase',
          outcome: 'denied',
          attempts: 0,
          reason: expect.stringContaining('approval policy'),
        }),
      ]),
    );
    for (const call of result.effects) expect(call.key).toMatch(new RegExp(`^${result.runId}:${call.toolName}:`));
    const progress = await handle.query(agentProgressQuery);
    expect(progress.effects).toEqual(result.effects);
  }, 60_000);
});

describe('chamvi run --wait and chamvi effects', () => {
  it('run --wait exits 1 and names the failed call with its attempts and last error; the table says outcome and attempts', async () => {
    const run = await runCli([
      'run',
      'reporter',
      '--prompt',
      'go',
      '--wait',
      '--address',
      env.address,
      '--task-queue',
      taskQueue,
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/tool\s+key\s+outcome\s+attempts/);
    expect(run.stdout).toMatch(new RegExp(`note\\s+\\S+\\s+executed\\s+1`));
    expect(run.stdout).toMatch(new RegExp(`notify\\s+\\S+\\s+failed\\s+${NOTIFY_ATTEMPTS}\\s+.*ECONNREFUSED`));
    expect(run.stdout).toMatch(/erase\s+\S+\s+denied\s+0\s+.*approval policy/);
    expect(run.stderr).toContain('1 effect call failed');
    expect(run.stderr).toContain('notify');
    expect(run.stderr).toContain(`after ${NOTIFY_ATTEMPTS} attempts`);
    process.stdout.write(
      `--- chamvi run --wait with a failed call (exit ${run.code}) ---\n${run.stdout}${run.stderr}\n`,
    );
  }, 60_000);

  it('run --wait --json exits 1 too and carries the same vocabulary (outcome, attempts, error)', async () => {
    const run = await runCli([
      'run',
      'reporter',
      '--prompt',
      'go',
      '--wait',
      '--json',
      '--address',
      env.address,
      '--task-queue',
      taskQueue,
    ]);
    expect(run.code).toBe(1);
    const parsed = JSON.parse(run.stdout) as { effects: Array<Record<string, unknown>> };
    expect(parsed.effects).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ toolName: 'notify', outcome: 'failed', attempts: NOTIFY_ATTEMPTS }),
      ]),
    );
  }, 60_000);

  it('chamvi effects says outcome and attempts for the same calls, in the table and in --json', async () => {
    const handle = await startAgentRun(env.client, { agent: 'reporter', prompt: 'go', taskQueue });
    const result = await handle.result();
    const table = await runCli(['effects', result.runId, '--store', storeSpec]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/tool\s+key\s+outcome\s+attempts\s+recorded at/);
    expect(table.stdout).not.toMatch(/origin|attempt\s/);
    const json = await runCli(['effects', result.runId, '--store', storeSpec, '--json']);
    const parsed = JSON.parse(json.stdout) as { effects: Array<Record<string, unknown>> };
    expect(parsed.effects).toEqual([expect.objectContaining({ toolName: 'note', outcome: 'executed', attempts: 1 })]);
    expect(parsed.effects[0]).not.toHaveProperty('origin');
  }, 60_000);

  it('run --wait with no worker polling the task queue says so, naming the task queue, instead of hanging', async () => {
    const empty = `nobody-${randomUUID()}`;
    const started = Date.now();
    const run = await runCli(
      ['run', 'reporter', '--prompt', 'go', '--wait', '--address', env.address, '--task-queue', empty],
      { CHAMVI_POLLER_WAIT_MS: '1000' },
      30_000,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`no worker is polling task queue "${empty}"`);
    expect(run.stderr).toContain('chamvi worker');
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 40_000);
});
