// A worker process SIGKILLed in the middle of a streaming model step, on a Temporal dev server
// with a PostgreSQL run stream: the step's retry on a second worker process streams again, and
// the UI stream (a reader that stayed connected, and one that connects afterwards and replays
// the durable log) ends with only the second attempt's text.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { UIMessage, UIMessageChunk } from 'ai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PostgresRunStreamStore } from '../../src/stream/postgres-run-stream.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { runUIMessageStream } from '../../worker/stream/run-ui-message-stream.js';
import { answerOf } from './fixtures/crash-answer.js';
import { dropTables } from './fixtures/drop-tables.js';
import { finalMessage } from './fixtures/final-message.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
let env: TestWorkflowEnvironment;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  env = await createDevServerEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-stream-crash-'));
}, 120_000);

afterAll(async () => {
  // Waits for the exits: a worker process still shutting down after this file keeps jest's worker alive.
  await Promise.all(children.map(stopChild));
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

/** SIGTERM, then the exit (at once if it has exited). */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Starts the worker process; resolves once it polls, with a way to wait for its n-th token. */
async function startWorker(
  vars: Record<string, string>,
): Promise<{ child: ChildProcess; tokens(n: number): Promise<void> }> {
  const script = fileURLToPath(new URL('./fixtures/stream-worker.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...vars },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const sent = output.match(/token \d+/g)?.length ?? 0;
    for (const w of waiting.filter((w) => sent >= w.n)) w.resolve();
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (output.includes('ready\n')) {
        clearInterval(check);
        resolve();
      }
    }, 20);
    child.once('exit', (code, signal) => {
      clearInterval(check);
      reject(new Error(`worker exited (${signal ?? String(code)}) before it was ready:\n${output}`));
    });
  });
  return { child, tokens: (n) => new Promise<void>((resolve) => waiting.push({ n, resolve })) };
}

async function readAll(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const out: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) out.push(next.value);
  return out;
}

const texts = (m: UIMessage | undefined): string[] =>
  m?.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])) ?? [];

describe('a worker SIGKILLed mid-stream', () => {
  it("leaves only the retried attempt's text, for the reader that stayed and for one that replays afterwards", async () => {
    const table = `stream_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const common = {
      TEMPORAL_ADDRESS: env.address,
      TASK_QUEUE: `q-${randomUUID()}`,
      STORE: join(dir, 'effects.db'),
      STREAM: PG_URL,
      STREAM_TABLE: table,
    };
    const stream = new PostgresRunStreamStore(PG_URL, { table });
    try {
      const doomed = await startWorker({ ...common, NAME: 'A' });
      const handle = await startAgentRun(env.client, {
        agent: 'crash-streamer',
        prompt: 'Answer.',
        taskQueue: common.TASK_QUEUE,
        // Short heartbeats: the dead worker's step is retried within seconds.
        activityOptions: { modelStep: { heartbeatTimeout: '2 seconds', retry: { initialInterval: '100 ms' } } },
      });
      // Without progress parts: a query sent while no worker is alive is retried by the Temporal
      // client on its own timers, which can outlive this file's connection (the run has no effects anyway).
      const staying = readAll(
        runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream, progressParts: false }),
      );
      await doomed.tokens(6);
      doomed.child.kill('SIGKILL');
      await startWorker({ ...common, NAME: 'B' });
      const result = await handle.result();
      expect(result.text).toBe(answerOf('B'));

      const chunks = await staying;
      const shown = chunks.flatMap((c) => (c.type === 'text-delta' ? [c.delta] : [])).join('');
      // It did show worker A's words before the crash, then the reset, then worker B's answer.
      expect(shown.startsWith('Worker A answers:')).toBe(true);
      expect(chunks.filter((c) => c.type === 'reset-step')).toHaveLength(1);
      expect(texts(await finalMessage(chunks))).toEqual([answerOf('B')]);

      const replay = await readAll(runUIMessageStream({ client: env.client, workflowId: handle.workflowId, stream }));
      expect(texts(await finalMessage(replay))).toEqual([answerOf('B')]);
    } finally {
      await stream.close();
      await dropTables([table]);
    }
  }, 120_000);
});
