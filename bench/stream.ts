// Run stream benchmark: the latency a token gains on the full streaming path (model-step activity
// -> run stream store -> runUIMessageStream reader) over a direct `streamText` call on the same
// scripted model, in the same process (one clock). The model emits TOKENS tokens, one every
// INTERVAL ms; a token's latency is the time from the model emitting it to the reader getting it.
// Full path: a Temporal dev server, a worker with the stream store, the reader in this process.
// Run: npm run bench:stream   (node --import tsx bench/stream.ts)
import { streamText, type UIMessageChunk } from 'ai';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineAgent } from '../src/index.js';
import { MemoryEffectStore } from '../src/stores/index.js';
import { PostgresRunStreamStore } from '../src/stream/postgres-run-stream.js';
import type { RunStreamStore } from '../src/stream/run-stream-store.js';
import { SqliteRunStreamStore } from '../src/stream/sqlite-run-stream.js';
import { createDevServerEnvironment } from '../testing/test-environment.js';
import { createAgentWorker } from '../worker/index.js';
import { startAgentRun } from '../client/index.js';
import { runUIMessageStream } from '../worker/stream/run-ui-message-stream.js';
import { timedModel, tokens } from './stream-model.js';

const PG_URL = process.env['CHAMVI_BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const TOKENS = Number(process.env['BENCH_STREAM_TOKENS'] ?? 300);
const INTERVAL = Number(process.env['BENCH_STREAM_INTERVAL_MS'] ?? 5);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const TEXT = Array.from({ length: TOKENS }, (_, i) => `w${i}`).join(' ');

interface Sample {
  readonly latencies: number[];
  readonly batches?: number;
}

const model = (sent: number[]) => timedModel(TEXT, INTERVAL, sent);

async function direct(): Promise<Sample> {
  const sent: number[] = [];
  const got: number[] = [];
  const result = streamText({ model: model(sent), prompt: 'Talk.', maxRetries: 0 });
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') for (const _ of tokens(part.text)) got.push(performance.now());
  }
  return { latencies: got.map((t, i) => t - (sent[i] ?? t)) };
}

const env = await createDevServerEnvironment();
const dir = mkdtempSync(join(tmpdir(), 'chamvi-bench-stream-'));

async function fullPath([stream, readerStore]: [RunStreamStore, RunStreamStore]): Promise<Sample> {
  const sent: number[] = [];
  const got: number[] = [];
  const agent = defineAgent({ name: `bench-${randomUUID()}`, model: model(sent) });
  const taskQueue = `bench-stream-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [agent],
    store: new MemoryEffectStore(),
    stream,
  });
  let deltas = 0;
  await worker.runUntil(async () => {
    const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Talk.', taskQueue });
    const reader = runUIMessageStream({
      client: env.client,
      workflowId: handle.workflowId,
      stream: readerStore,
    }).getReader();
    for (;;) {
      const next: ReadableStreamReadResult<UIMessageChunk> = await reader.read();
      if (next.done) break;
      if (next.value.type !== 'text-delta') continue;
      deltas++;
      for (const _ of tokens(next.value.delta)) got.push(performance.now());
    }
    await handle.result();
  });
  if (got.length !== TOKENS) throw new Error(`the reader got ${got.length} of ${TOKENS} tokens`);
  return { latencies: got.map((t, i) => t - (sent[i] ?? t)), batches: deltas };
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

// Writer and reader on separate store objects (as a worker and a web server would be), except the
// last side: one SQLite object shared in one process, whose appends wake its readers directly.
const stores: RunStreamStore[] = [];
const kept = <T extends RunStreamStore>(store: T): T => (stores.push(store), store);
const pgPair = (): [RunStreamStore, RunStreamStore] => {
  const table = `bench_stream_${process.pid}`;
  return [kept(new PostgresRunStreamStore(PG_URL, { table })), kept(new PostgresRunStreamStore(PG_URL, { table }))];
};
const sqlitePair = (pollMs?: number): [RunStreamStore, RunStreamStore] => {
  const path = join(dir, `${randomUUID()}.db`);
  const options = pollMs === undefined ? {} : { pollMs };
  return [kept(new SqliteRunStreamStore(path)), kept(new SqliteRunStreamStore(path, options))];
};
const sqliteShared = (): [RunStreamStore, RunStreamStore] => {
  const store = kept(new SqliteRunStreamStore(join(dir, `${randomUUID()}.db`)));
  return [store, store];
};
const sides: Array<[string, () => Promise<Sample>]> = [
  ['direct streamText', direct],
  ['full path, PostgreSQL (LISTEN/NOTIFY)', () => fullPath(pgPair())],
  ['full path, SQLite, reader polls every 50 ms (default)', () => fullPath(sqlitePair())],
  ['full path, SQLite, reader polls every 10 ms', () => fullPath(sqlitePair(10))],
  ['full path, SQLite, one store object (one process)', () => fullPath(sqliteShared())],
];

try {
  await direct(); // warm-up: module loading, JIT
  await fullPath(pgPair());
  const results = new Map<string, { p50: number[]; p95: number[]; batches: number[] }>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of sides) {
      const sample = await run();
      const entry = results.get(name) ?? { p50: [], p95: [], batches: [] };
      entry.p50.push(pct(sample.latencies, 50));
      entry.p95.push(pct(sample.latencies, 95));
      if (sample.batches !== undefined) entry.batches.push(sample.batches);
      results.set(name, entry);
    }
  }
  const median = (xs: number[]): number => pct(xs, 50);
  const base = results.get('direct streamText');
  console.log(
    `run stream: ${TOKENS} tokens, one every ${INTERVAL} ms; medians of ${ROUNDS} rounds; latency per token in ms`,
  );
  console.log('| path | p50 | p95 | added p50 | added p95 | UI text-delta chunks |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [name, r] of results) {
    const p50 = median(r.p50);
    const p95 = median(r.p95);
    const added =
      base === undefined ? '' : `${(p50 - median(base.p50)).toFixed(2)} | ${(p95 - median(base.p95)).toFixed(2)}`;
    console.log(
      `| ${name} | ${p50.toFixed(2)} | ${p95.toFixed(2)} | ${name === 'direct streamText' ? '– | –' : added} | ${r.batches.length > 0 ? median(r.batches) : TOKENS} |`,
    );
  }
} finally {
  for (const store of stores) await store.close();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP TABLE IF EXISTS "bench_stream_${process.pid}"`);
  await admin.end();
  await env.teardown();
  rmSync(dir, { recursive: true, force: true });
}
