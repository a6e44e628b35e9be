import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { CLI_MAIN, ROOT, runCli } from './run-cli.js';

let env: TestWorkflowEnvironment;
let dir: string;
let worker: ChildProcess | undefined;
const taskQueue = `cli-${randomUUID()}`;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-cli-'));
}, 120_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker?.once('exit', resolve));
    worker.kill('SIGTERM');
    await exited;
  }
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

describe('chamvi worker, run and effects against a Temporal dev server', () => {
  it('a worker serves an agents module; run --wait prints the effects; effects lists the store records by run or workflow id', async () => {
    const store = `sqlite:${join(dir, 'effects.db')}`;
    // The worker reads its settings from the env vars docker-compose sets.
    const settings = { TEMPORAL_ADDRESS: env.address, CHAMVI_TASK_QUEUE: taskQueue, CHAMVI_STORE: store };
    worker = spawn(
      process.execPath,
      ['--import', 'tsx', CLI_MAIN, 'worker', '--agents', 'test/product/fixtures/note-agents.ts'],
      {
        cwd: ROOT,
        env: { ...process.env, ...settings },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    await new Promise<void>((resolve, reject) => {
      worker?.stdout?.on('data', (c: Buffer) => {
        output += c.toString();
        if (output.includes('\nready\n')) resolve();
      });
      worker?.stderr?.on('data', (c: Buffer) => (output += c.toString()));
      worker?.once('exit', (code) => reject(new Error(`worker exited (${String(code)}):\n${output}`)));
    });
    expect(output).toContain(`task queue "${taskQueue}"`);
    expect(output).toContain('agents: noter');

    const workflowId = `cli-run-${randomUUID()}`;
    const flags = ['--address', env.address, '--task-queue', taskQueue];
    const run = await runCli([
      'run',
      'noter',
      '--prompt',
      'note it',
      '--workflow-id',
      workflowId,
      '--wait',
      '--json',
      ...flags,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as {
      workflowId: string;
      runId: string;
      text: string;
      effects: Array<Record<string, unknown>>;
    };
    expect(result).toMatchObject({ workflowId, text: 'Noted.' });
    expect(result.effects).toEqual([expect.objectContaining({ toolName: 'note', outcome: 'executed', attempts: 1 })]);

    const [byWorkflow, byRun, unknown] = await Promise.all([
      runCli(['effects', workflowId, '--store', store, '--address', env.address]),
      runCli(['effects', result.runId, '--store', store, '--address', '127.0.0.1:1']),
      runCli(['effects', 'no-such-run', '--store', store, '--address', env.address]),
    ]);
    expect(byWorkflow.code).toBe(0);
    expect(byWorkflow.stdout).toContain(`effects of run ${result.runId} (workflow ${workflowId})`);
    expect(byWorkflow.stdout).toMatch(/tool\s+key\s+outcome\s+attempts\s+recorded at/);
    expect(byWorkflow.stdout).toMatch(new RegExp(`note\\s+${result.runId}:note:[0-9a-f]+\\s+executed\\s+1\\s`));
    // A run id needs no server.
    expect(byRun.code).toBe(0);
    expect(byRun.stdout).toContain(`effects of run ${result.runId}:`);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no effect records for "no-such-run"');
  }, 120_000);
});
