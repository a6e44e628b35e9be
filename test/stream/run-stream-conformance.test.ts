// The run stream stores against one conformance suite (test/stream/run-stream-conformance.ts): the
// memory store, SQLite on a real file (siblings are second connections to it, as another process
// would open it) and real PostgreSQL (siblings are second pools and listeners). Cursors only grow
// across prune, streams are keyed per workflow execution chain, close releases waiting readers
// within 10 ms, out-of-range options are refused at construction, and a follower gets every batch
// once and in order.
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidEffectStoreSpecError } from '../../src/errors/errors.js';
import { createRunStreamStore } from '../../src/stream/create-run-stream-store.js';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import { PostgresRunStreamStore, type PostgresRunStreamOptions } from '../../src/stream/postgres-run-stream.js';
import type { RunStreamStore } from '../../src/stream/run-stream-store.js';
import { SqliteRunStreamStore, type SqliteRunStreamOptions } from '../../src/stream/sqlite-run-stream.js';
import { dropTables } from './fixtures/drop-tables.js';
import { runStreamStoreConformance } from './run-stream-conformance.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

runStreamStoreConformance({
  name: 'memory',
  create: (options) => new MemoryRunStreamStore(options),
  sibling: (store) => store,
  tables: false,
});

const dir = mkdtempSync(join(tmpdir(), 'chamvi-stream-conformance-'));
const files = new WeakMap<RunStreamStore, [string, SqliteRunStreamOptions]>();
runStreamStoreConformance({
  name: 'SQLite',
  create(options = {}) {
    const path = join(dir, `${randomUUID()}.db`);
    const store = new SqliteRunStreamStore(path, { pollMs: 20, ...options });
    files.set(store, [path, { pollMs: 20, ...options }]);
    return store;
  },
  sibling(store) {
    const [path, options] = files.get(store) ?? [];
    if (path === undefined) throw new Error('not a store of this harness');
    return new SqliteRunStreamStore(path, options);
  },
  poll: { name: 'pollMs', min: 10 },
  tables: true,
  cleanup: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
});

const tables: string[] = [];
const pgOptions = new WeakMap<RunStreamStore, PostgresRunStreamOptions>();
runStreamStoreConformance({
  name: 'PostgreSQL',
  create(options = {}) {
    const table = typeof options['table'] === 'string' ? options['table'] : `stream_${randomUUID().slice(0, 8)}`;
    tables.push(table);
    const all = { ...options, table } as PostgresRunStreamOptions;
    const store = new PostgresRunStreamStore(PG_URL, all);
    pgOptions.set(store, all);
    return store;
  },
  sibling(store) {
    const options = pgOptions.get(store);
    if (options === undefined) throw new Error('not a store of this harness');
    return new PostgresRunStreamStore(PG_URL, options);
  },
  poll: { name: 'safetyPollMs', min: 100 },
  tables: true,
  // Only the names that are table names: the refused ones never created anything.
  cleanup: () => dropTables(tables.filter((t) => /^[a-z_][a-z0-9_]{0,54}$/.test(t))),
});

describe('createRunStreamStore', () => {
  it.each([
    ['memory:', { retentionMs: NaN }, /retentionMs is NaN/],
    ['memory:', { pollMs: 0 }, /pollMs is 0/],
    ['memory:', { safetyPollMs: NaN }, /safetyPollMs is NaN/],
    [join(dir, 'refused.db'), { pollMs: -5 }, /pollMs is -5/],
    [join(dir, 'refused.db'), { safetyPollMs: 0 }, /safetyPollMs is 0/],
    [PG_URL, { retentionMs: -1 }, /retentionMs is -1/],
    [PG_URL, { table: 'p'.repeat(70) }, /table is "p+" \(70 characters\)/],
  ])('refuses %s with %p, naming the option and its range, whatever store the spec opens', (spec, options, message) => {
    let error: unknown;
    try {
      createRunStreamStore(spec, options);
    } catch (e) {
      error = e;
    }
    expect(InvalidEffectStoreSpecError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/ from \d+ to \d+| 1 to 55 characters/);
  });
});
