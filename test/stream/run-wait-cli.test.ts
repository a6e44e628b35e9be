// `chamvi run --wait` prints a run's text as it streams, against a Temporal dev server: a
// `chamvi worker --stream store` process writes the model steps' deltas to its SQLite file, and
// the run command, given the same spec, prints them while the run goes on, then the effects.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { CLI_MAIN, ROOT } from '../product/run-cli.js';
import { STREAMED_ANSWER } from './fixtures/streaming-agents.js';

let env: TestWorkflowEnvironment;
let dir: string;
let worker: ChildProcess | undefined;
const taskQueue = `cli-stream-${randomUUID()}`;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-cli-stream-'));
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

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(CHAMVI_|TEMPORAL_ADDRESS|TEMPORAL_NAMESPACE)/.test(k)),
  );
  return { ...base, ...extra };
}

describe('chamvi run --wait with a run stream', () => {
  it('prints the text as it streams, before the run ends, then the effects', async () => {
    const settings = {
      TEMPORAL_ADDRESS: env.address,
      CHAMVI_TASK_QUEUE: taskQueue,
      CHAMVI_STORE: `sqlite:${join(dir, 'effects.db')}`,
    };
    worker = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        CLI_MAIN,
        'worker',
        '--agents',
        'test/stream/fixtures/streaming-agents.ts',
        '--stream',
        'store',
      ],
      { cwd: ROOT, env: cleanEnv(settings), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let workerOutput = '';
    await new Promise<void>((resolve, reject) => {
      worker?.stdout?.on('data', (c: Buffer) => {
        workerOutput += c.toString();
        if (workerOutput.includes('\nready\n')) resolve();
      });
      worker?.stderr?.on('data', (c: Buffer) => (workerOutput += c.toString()));
      worker?.once('exit', (code) => reject(new Error(`worker exited (${String(code)}):\n${workerOutput}`)));
    });
    expect(workerOutput).toContain('run stream: sqlite');

    const run = spawn(
      process.execPath,
      ['--import', 'tsx', CLI_MAIN, 'run', 'streamer', '--prompt', 'note it', '--wait', '--stream', 'store'],
      { cwd: ROOT, env: cleanEnv(settings), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const pieces: Array<{ text: string; at: number }> = [];
    let stderr = '';
    run.stdout.on('data', (c: Buffer) => pieces.push({ text: c.toString(), at: Date.now() }));
    run.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => run.once('close', resolve));
    const exitedAt = Date.now();
    const stdout = pieces.map((p) => p.text).join('');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    // The answer is there once, streamed: its first word reached stdout well before the process ended.
    expect(stdout.split(STREAMED_ANSWER)).toHaveLength(2);
    const firstWordAt = pieces.find((p) => p.text.includes(' and'))?.at ?? Infinity;
    expect(exitedAt - firstWordAt).toBeGreaterThan(500);
    expect(
      pieces.filter((p) => STREAMED_ANSWER.includes(p.text.trim()) && p.text.trim().length > 0).length,
    ).toBeGreaterThan(3);
    expect(stdout).toContain('[tool note {"text":"hello"}]');
    expect(stdout).toMatch(/effects of run .*\n[\s\S]*note[\s\S]*executed/);
  }, 120_000);
});
