// The conversation-entry and payload tables of every store this library ships, against one
// conformance suite (test/stores/conversation-conformance.ts).
import { afterAll } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { MemoryEffectStore } from '../../src/index.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import { PostgresEffectStore } from '../../src/stores/postgres.js';
import { SqliteEffectStore } from '../../src/stores/sqlite.js';
import { conversationStoreConformance } from './conversation-conformance.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let clock = Date.now();
conversationStoreConformance({
  name: 'memory',
  create: async (options) => new MemoryEffectStore({ now: () => clock, ...options }),
  sibling: async (store) => store,
  advance: async (ms) => {
    clock += ms;
  },
});

const dir = mkdtempSync(join(tmpdir(), 'chamvi-conversation-'));
let tables = 0;
const sqliteOptions = new WeakMap<ManagedEffectStore, { path: string; table: string; retentionMs?: number }>();
conversationStoreConformance({
  name: 'SQLite',
  create: async (options) => {
    const o = { path: join(dir, 'conversation.db'), table: `t${++tables}`, ...options };
    const store = new SqliteEffectStore(o);
    sqliteOptions.set(store, o);
    return store;
  },
  sibling: async (store) => new SqliteEffectStore(sqliteOptions.get(store)!),
  advance: sleep,
});

const URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `chamvi_conv_${process.pid}`;
const pgOptions = new WeakMap<ManagedEffectStore, { table: string; retentionMs?: number }>();
const openPg = (o: { table: string; retentionMs?: number }) =>
  new PostgresEffectStore({ connectionString: URL, pool: { max: 4 }, schema, ...o });
conversationStoreConformance({
  name: 'PostgreSQL',
  create: async (options) => {
    const o = { table: `t${++tables}`, ...options };
    const store = openPg(o);
    pgOptions.set(store, o);
    return store;
  },
  sibling: async (store) => openPg(pgOptions.get(store)!),
  advance: sleep,
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const admin = new pg.Pool({ connectionString: URL, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});
