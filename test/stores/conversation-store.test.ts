// The conversation-entry and payload tables of every store this library ships, against one
// conformance suite (test/stores/conversation-conformance.ts).
import { afterAll } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { SQLITE_NOW_MS } from '../../src/stores/sqlite-schema.js';
import { conversationStoreConformance } from './conversation-conformance.js';

/** `statement` with the conformance suite's placeholders filled in. */
function fill(statement: string, names: Record<'conv' | 'runs' | 'execs' | 'now' | 'true' | 'false', string>): string {
  return statement.replace(/\$(conv|runs|execs|now|true|false)\b/g, (_, name: keyof typeof names) => names[name]);
}

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
  tamper: async (store, statement) => {
    const { path, table } = sqliteOptions.get(store)!;
    const db = new DatabaseSync(path);
    try {
      db.exec(
        fill(statement, {
          conv: `"${table}_conv"`,
          runs: `"${table}_conv_runs"`,
          execs: `"${table}_conv_execs"`,
          now: SQLITE_NOW_MS,
          true: '1',
          false: '0',
        }),
      );
    } finally {
      db.close();
    }
  },
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
  tamper: async (store, statement) => {
    const { table } = pgOptions.get(store)!;
    const admin = new pg.Pool({ connectionString: URL, max: 1 });
    try {
      const names = {
        conv: `${schema}.${table}_conv`,
        runs: `${schema}.${table}_conv_runs`,
        execs: `${schema}.${table}_conv_execs`,
      };
      await admin.query(fill(statement, { ...names, now: 'now()', true: 'true', false: 'false' }));
    } finally {
      await admin.end();
    }
  },
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const admin = new pg.Pool({ connectionString: URL, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});
