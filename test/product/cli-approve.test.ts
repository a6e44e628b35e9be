// `chamvi run --wait` and `chamvi approve` around a call that needs approval, against a Temporal
// dev server and a `chamvi worker` process: the waiting run prints the command that decides the
// call, and `chamvi approve` gives up at its deadline with a message instead of hanging.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listPendingApprovals, startAgentRun } from '../../client/index.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { CLI_MAIN, ROOT, runCli } from './run-cli.js';

let env: TestWorkflowEnvironment;
let dir: string;
const workers: ChildProcess[] = [];
const SECRET = 'cli-approve-test-secret-0123456789';

beforeAll(async () => {
  env = await createDevServerEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-cli-approve-'));
}, 120_000);

afterAll(async () => {
  for (const worker of workers) {
    if (worker.exitCode !== null || worker.signalCode !== null) continue;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    await exited;
  }
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(CHAMVI_|TEMPORAL_ADDRESS|TEMPORAL_NAMESPACE)/.test(k)),
  );
  return { ...base, ...extra };
}

/** A `chamvi worker` serving the publisher on a fresh task queue, once it says `ready`. */
async function startWorker(): Promise<{ worker: ChildProcess; taskQueue: string }> {
  const taskQueue = `cli-approve-${randomUUID()}`;
  const worker = spawn(
    process.execPath,
    ['--import', 'tsx', CLI_MAIN, 'worker', '--agents', 'test/product/fixtures/approval-agents.ts'],
    {
      cwd: ROOT,
      env: cleanEnv({
        TEMPORAL_ADDRESS: env.address,
        CHAMVI_TASK_QUEUE: taskQueue,
        CHAMVI_STORE: `sqlite:${join(dir, `${taskQueue}.db`)}`,
        CHAMVI_APPROVAL_SECRET: SECRET,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  workers.push(worker);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    worker.stdout?.on('data', (c: Buffer) => {
      output += c.toString();
      if (output.includes('\nready\n')) resolve();
    });
    worker.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    worker.once('exit', (code) => reject(new Error(`worker exited (${String(code)}):\n${output}`)));
  });
  return { worker, taskQueue };
}

describe('chamvi run --wait and chamvi approve around a call that needs approval', () => {
  it('run --wait prints "waiting for approval: chamvi approve <workflow> <call>" once, and that command lets the run finish', async () => {
    const { taskQueue } = await startWorker();
    const workflowId = `cli-approve-${randomUUID()}`;
    const flags = ['--address', env.address, '--task-queue', taskQueue];
    const run = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        CLI_MAIN,
        'run',
        'publisher',
        '--prompt',
        'publish',
        '--workflow-id',
        workflowId,
        '--wait',
        ...flags,
      ],
      { cwd: ROOT, env: cleanEnv({}), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    run.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const closed = new Promise<number | null>((resolve) => run.once('close', resolve));
    const hint = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no approval hint in 30 s:\n${stdout}\n${stderr}`)), 30_000);
      run.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
        const found = /waiting for approval: chamvi approve (\S+) (\S+)\n/.exec(stdout);
        if (found !== null) {
          clearTimeout(timer);
          resolve(found);
        }
      });
    });
    expect(hint[1]).toBe(workflowId);
    // Polled every second: a few more polls see the same call and print nothing.
    await new Promise((resolve) => setTimeout(resolve, 2500));

    const approve = await runCli(['approve', workflowId, hint[2] ?? '', ...flags], { CHAMVI_APPROVAL_SECRET: SECRET });
    expect(approve.stderr).toBe('');
    expect(approve.stdout).toContain(`approved publish call ${hint[2]} of workflow ${workflowId}`);
    expect(await closed).toBe(0);
    expect(stderr).toBe('');
    expect(stdout.match(/waiting for approval/g)).toHaveLength(1);
    expect(stdout).toContain('Published.');
    expect(stdout).toMatch(/publish[\s\S]*executed/);
  }, 90_000);

  it('chamvi approve with no worker answering gives up at --timeout, saying nothing was sent and what to check', async () => {
    const { worker, taskQueue } = await startWorker();
    const handle = await startAgentRun(env.client, { agent: 'publisher', prompt: 'publish', taskQueue });
    let pending = await listPendingApprovals(env.client, handle.workflowId);
    for (let i = 0; pending.length === 0 && i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      pending = await listPendingApprovals(env.client, handle.workflowId);
    }
    const call = pending[0]?.toolCallId ?? '';
    expect(call).not.toBe('');
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGKILL');
    await exited;

    const flags = ['--address', env.address, '--task-queue', taskQueue];
    const started = Date.now();
    const approve = await runCli(
      ['approve', handle.workflowId, call, '--timeout', '2', ...flags],
      { CHAMVI_APPROVAL_SECRET: SECRET },
      40_000,
    );
    const tookMs = Date.now() - started;
    expect(approve.code).toBe(1);
    expect(approve.stderr).toContain(`chamvi: approve: no answer from workflow ${handle.workflowId} within 2 s`);
    expect(approve.stderr).toContain('nothing was sent');
    expect(approve.stderr).toContain('check that a worker is running');
    expect(tookMs).toBeLessThan(20_000);

    const bad = await runCli(['approve', handle.workflowId, call, '--timeout', '0', ...flags], {
      CHAMVI_APPROVAL_SECRET: SECRET,
    });
    expect(bad.stderr).toContain('--timeout must be a number of seconds in (0, 86400], got "0"');
    await handle.terminate('test done');
  }, 90_000);
});
