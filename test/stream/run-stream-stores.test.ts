// The run stream stores beyond their conformance suite (run-stream-conformance.test.ts), and the
// UI view of a run's batches, without Temporal: a PostgreSQL reader wakes by NOTIFY (its safety
// poll far away) and when its listening connection is lost, an SQLite reader in another
// connection follows through its poll, retention prunes, and a retried attempt's text replaces
// the failed one's in the message AI SDK's own reader builds.
import { afterAll, describe, expect, it } from '@jest/globals';
import type { UIMessage, UIMessageChunk } from 'ai';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EffectStoreSchemaError } from '../../src/errors/errors.js';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import { PostgresRunStreamStore } from '../../src/stream/postgres-run-stream.js';
import type { RunStreamBatch, RunStreamStore } from '../../src/stream/run-stream-store.js';
import { RunStreamWriter } from '../../src/stream/run-stream-writer.js';
import { SqliteRunStreamStore } from '../../src/stream/sqlite-run-stream.js';
import { RunStreamUIState } from '../../src/stream/ui-chunks.js';
import { readRunStream } from '../../src/stream/read-run-stream.js';
import { dropTables } from './fixtures/drop-tables.js';
import { finalMessage } from './fixtures/final-message.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(join(tmpdir(), 'chamvi-stream-'));
const opened: RunStreamStore[] = [];
const tables: string[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
  rmSync(dir, { recursive: true, force: true });
  await dropTables(tables);
});

const table = (): string => {
  const name = `stream_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  tables.push(name);
  return name;
};
const open = (make: () => RunStreamStore): RunStreamStore => {
  const store = make();
  opened.push(store);
  return store;
};
const stream = (runId: string) => ({ runId, workflowId: `wf-${runId}`, firstExecutionRunId: `first-${runId}` });
const ref = (runId: string, attempt = 1, step = 0) => ({ ...stream(runId), step, attempt, execution: 'exec-1' });

describe('the PostgreSQL run stream', () => {
  it('wakes readers by NOTIFY, not by polling: a reader with a 60 s safety poll wakes within 250 ms of each commit', async () => {
    const store = open(() => new PostgresRunStreamStore(PG_URL, { table: table(), safetyPollMs: 60_000 }));
    const writer = open(
      () => new PostgresRunStreamStore(PG_URL, { table: (store as unknown as { table: string }).table }),
    );
    const run = randomUUID();
    await store.read(stream(run), 0);
    await store.waitForAppend(stream(run), 0, AbortSignal.abort()); // the listening connection is up
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const waiting = store.waitForAppend(stream(run), i);
      await new Promise((r) => setTimeout(r, 20));
      const before = performance.now();
      await writer.append(ref(run), [{ type: 'text-delta', id: 't', delta: String(i) }]);
      await waiting;
      latencies.push(performance.now() - before);
    }
    latencies.sort((a, b) => a - b);
    expect(latencies[latencies.length - 1]).toBeLessThan(250);
  });

  it('wakes every waiting reader when its listening connection is lost, and listens again on the next wait', async () => {
    const store = open(() => new PostgresRunStreamStore(PG_URL, { table: table(), safetyPollMs: 60_000 }));
    const run = randomUUID();
    await store.waitForAppend(stream(run), 0, AbortSignal.abort());
    const waiting = store.waitForAppend(stream(run), 0);
    const listener = await (store as unknown as { listener: Promise<{ end(): Promise<void> }> }).listener;
    const started = Date.now();
    await listener.end();
    await waiting;
    expect(Date.now() - started).toBeLessThan(1000);
    const again = store.waitForAppend(stream(run), 0);
    await new Promise((r) => setTimeout(r, 100));
    await store.append(ref(run), [{ type: 'step-end', finishReason: 'stop' }]);
    await again;
  });
});

describe('the SQLite run stream', () => {
  it('is read by another connection to the same file (another process) through its poll', async () => {
    const path = join(dir, `${randomUUID()}.db`);
    const writer = open(() => new SqliteRunStreamStore(path));
    const reader = open(() => new SqliteRunStreamStore(path, { pollMs: 25 }));
    const run = randomUUID();
    const seen: string[] = [];
    const stop = new AbortController();
    const reading = (async () => {
      for await (const batch of readRunStream({ store: reader, ...stream(run), signal: stop.signal })) {
        for (const part of batch.parts) if (part.type === 'text-delta') seen.push(part.delta);
        if (seen.length === 3) stop.abort();
      }
    })();
    for (const delta of ['a', 'b', 'c']) {
      await writer.append(ref(run), [{ type: 'text-delta', id: 't', delta }]);
      await new Promise((r) => setTimeout(r, 30));
    }
    await reading;
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('prunes batches past their retention', async () => {
    const store = open(() => new SqliteRunStreamStore(join(dir, `${randomUUID()}.db`), { retentionMs: 1 }));
    const run = randomUUID();
    await store.prune(); // so the append's hourly prune does not run first
    await store.append(ref(run), [{ type: 'text-delta', id: 't', delta: 'a' }]);
    await new Promise((r) => setTimeout(r, 20));
    expect(await store.prune()).toBe(1);
    expect(await store.read(stream(run), 0)).toEqual([]);
  });
});

describe('a stream table of a development build (batches keyed by run id only)', () => {
  const OLD = (t: string) =>
    `CREATE TABLE "${t}" (run_id TEXT NOT NULL, seq INTEGER NOT NULL, step INTEGER NOT NULL, attempt INTEGER NOT NULL, execution TEXT NOT NULL, parts TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (run_id, seq))`;

  it('is refused by SQLite with EffectStoreSchemaError naming the table, not written to', async () => {
    const path = join(dir, `${randomUUID()}.db`);
    const db = new (process.getBuiltinModule('node:sqlite').DatabaseSync)(path);
    db.exec(OLD('chamvi_stream'));
    db.close();
    const store = open(() => new SqliteRunStreamStore(path));
    const error = await store.append(ref('r'), [{ type: 'step-end', finishReason: 'stop' }]).catch((e: unknown) => e);
    expect(EffectStoreSchemaError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/"chamvi_stream" .*without workflow identity.*drop it/);
  });

  it('is refused by PostgreSQL with EffectStoreSchemaError naming the table, not written to', async () => {
    const name = table();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(OLD(name));
    await admin.end();
    const store = open(() => new PostgresRunStreamStore(PG_URL, { table: name }));
    const error = await store.read(stream('r'), 0).catch((e: unknown) => e);
    expect(EffectStoreSchemaError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`"${name}" has batches without workflow identity`);
  });
});

describe('the run stream writer', () => {
  it('writes the first delta at once and batches what arrives while a write is in flight', async () => {
    const store = new MemoryRunStreamStore();
    let release: () => void = () => undefined;
    const slow: RunStreamStore = Object.assign(Object.create(store) as RunStreamStore, {
      append: async (...args: Parameters<RunStreamStore['append']>) => {
        await new Promise<void>((r) => (release = r));
        return store.append(...args);
      },
    });
    const writer = new RunStreamWriter(slow, ref('r'));
    writer.push({ type: 'text-delta', id: 't', delta: 'a' });
    for (const d of ['b', 'c', 'd']) writer.push({ type: 'text-delta', id: 't', delta: d });
    release();
    await new Promise((r) => setTimeout(r, 0));
    release();
    await writer.close();
    expect((await store.read(stream('r'), 0)).map((b) => b.parts)).toEqual([
      [{ type: 'text-delta', id: 't', delta: 'a' }],
      [{ type: 'text-delta', id: 't', delta: 'bcd' }],
    ]);
  });

  it('keeps the parts of a failed write and writes them, in order, with the next', async () => {
    const store = new MemoryRunStreamStore();
    let fail = true;
    const flaky: RunStreamStore = Object.assign(Object.create(store) as RunStreamStore, {
      append: (...args: Parameters<RunStreamStore['append']>) =>
        fail ? Promise.reject(new Error('down')) : store.append(...args),
    });
    const warnings: string[] = [];
    const writer = new RunStreamWriter(flaky, ref('r'), (m) => warnings.push(m));
    writer.push({ type: 'text-delta', id: 't', delta: 'a' });
    await new Promise((r) => setTimeout(r, 0));
    fail = false;
    writer.push({ type: 'tool-input-start', toolCallId: 'c', toolName: 'x' });
    await writer.close();
    expect((await store.read(stream('r'), 0)).flatMap((b) => b.parts)).toEqual([
      { type: 'text-delta', id: 't', delta: 'a' },
      { type: 'tool-input-start', toolCallId: 'c', toolName: 'x' },
    ]);
    expect(warnings).toHaveLength(1);
  });
});

describe('the UI view of a run stream', () => {
  const batch = (cursor: number, step: number, attempt: number, deltas: string[], end = false): RunStreamBatch => ({
    ...ref('r', attempt, step),
    cursor,
    parts: [
      ...deltas.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
      ...(end ? [{ type: 'step-end' as const, finishReason: 'stop' }] : []),
    ],
  });

  const texts = (m: UIMessage | undefined) => m?.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])) ?? [];

  it("shows only the retried attempt's text of a step whose first attempt broke off mid-stream", async () => {
    const ui = new RunStreamUIState();
    const chunks: UIMessageChunk[] = [{ type: 'start' }];
    for (const b of [
      batch(1, 0, 1, ['Hello', ' wor']),
      batch(2, 0, 2, ['Good']),
      batch(3, 0, 1, ['ld (a zombie)']),
      batch(4, 0, 2, [' day'], true),
      batch(5, 1, 1, ['Bye'], true),
    ])
      chunks.push(...ui.batch(b));
    chunks.push({ type: 'finish' });
    expect(chunks.filter((c) => c.type === 'reset-step')).toHaveLength(1);
    expect(texts(await finalMessage(chunks))).toEqual(['Good day', 'Bye']);
  });

  it('without reset-step, the same batches would append the broken text (the mechanism the test above relies on)', async () => {
    const ui = new RunStreamUIState();
    const chunks = [batch(1, 0, 1, ['Hello']), batch(2, 0, 2, ['Good'], true)].flatMap((b) => ui.batch(b));
    const without = chunks.filter((c) => c.type !== 'reset-step');
    expect(texts(await finalMessage([{ type: 'start' }, ...without]))).toEqual(['Hello', 'Good']);
  });
});
