import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ConversationEntry } from '../conversation/conversation-entry.js';
import { SQLITE_NOW_MS as NOW } from './sqlite-schema.js';

/** Names of the conversation tables next to the effects table `table` (short suffixes: see the PostgreSQL store's name limit). */
export function conversationTables(table: string): { entries: string; runs: string; payloads: string } {
  return { entries: `${table}_conv`, runs: `${table}_conv_runs`, payloads: `${table}_payloads` };
}

/**
 * Creates the conversation-entry, run and payload tables if missing (inside the caller's
 * `BEGIN IMMEDIATE`). They are new in 0.3 and only ever added to, so an older file gains them
 * on first open and no migration is needed.
 */
export function ensureSqliteConversationSchema(db: DatabaseSync, table: string): void {
  const { entries, runs, payloads } = conversationTables(table);
  db.exec(`
    CREATE TABLE IF NOT EXISTS "${entries}" (
      key TEXT NOT NULL PRIMARY KEY,
      parent TEXT NOT NULL,
      run_id TEXT NOT NULL,
      json TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS "${table}_conv_run" ON "${entries}" (run_id);
    CREATE TABLE IF NOT EXISTS "${runs}" (
      run_id TEXT NOT NULL PRIMARY KEY,
      open INTEGER NOT NULL,
      touched_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS "${payloads}" (
      key TEXT NOT NULL PRIMARY KEY,
      data BLOB NOT NULL,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS "${table}_pl_exp" ON "${payloads}" (expires_at);
  `);
}

/** The prepared statements of the conversation tables. */
export interface SqliteConversationStatements {
  readonly insertEntry: StatementSync;
  readonly touchRun: StatementSync;
  readonly chain: StatementSync;
  readonly putPayload: StatementSync;
  readonly getPayload: StatementSync;
  readonly pruneEntries: StatementSync;
  readonly pruneRuns: StatementSync;
  readonly prunePayloads: StatementSync;
}

export function sqliteConversationStatements(db: DatabaseSync, table: string): SqliteConversationStatements {
  // A run may go once it closed more than the retention ago, or stayed open past the abandonment horizon.
  const GONE = `touched_at <= ${NOW} - CASE WHEN open = 1 THEN :abandoned ELSE :retention END`;
  const { entries, runs, payloads } = conversationTables(table);
  const e = `"${entries}"`;
  const r = `"${runs}"`;
  const p = `"${payloads}"`;
  return {
    insertEntry: db.prepare(
      `INSERT INTO ${e} (key, parent, run_id, json) VALUES (:key, :parent, :run, :json) ON CONFLICT (key) DO NOTHING`,
    ),
    touchRun: db.prepare(`
      INSERT INTO ${r} (run_id, open, touched_at) VALUES (:run, :open, ${NOW})
      ON CONFLICT (run_id) DO UPDATE SET open = excluded.open, touched_at = excluded.touched_at`),
    // Parent by parent from the head; the chain ends at the first parent that is not stored (the run's root).
    chain: db.prepare(`
      WITH RECURSIVE chain(key, parent, json, depth) AS (
        SELECT key, parent, json, 0 FROM ${e} WHERE key = :head
        UNION ALL
        SELECT c.key, c.parent, c.json, chain.depth + 1 FROM ${e} c JOIN chain ON c.key = chain.parent)
      SELECT key, parent, json FROM chain ORDER BY depth DESC`),
    putPayload: db.prepare(`
      INSERT INTO ${p} (key, data, expires_at) VALUES (:key, :data, ${NOW} + :retention)
      ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at`),
    getPayload: db.prepare(`SELECT data FROM ${p} WHERE key = :key AND expires_at > ${NOW}`),
    pruneEntries: db.prepare(`
      DELETE FROM ${e} WHERE key IN (
        SELECT c.key FROM ${e} c JOIN ${r} USING (run_id) WHERE ${GONE} LIMIT :n)`),
    pruneRuns: db.prepare(`
      DELETE FROM ${r} WHERE run_id IN (
        SELECT run_id FROM ${r} WHERE ${GONE}
          AND NOT EXISTS (SELECT 1 FROM ${e} c WHERE c.run_id = ${r}.run_id) LIMIT :n)`),
    prunePayloads: db.prepare(`
      DELETE FROM ${p} WHERE key IN (SELECT key FROM ${p} WHERE expires_at <= ${NOW} ORDER BY expires_at LIMIT :n)`),
  };
}

/** The entries of a chain query's rows. */
export function toEntries(rows: readonly unknown[]): ConversationEntry[] {
  return (rows as Array<{ key: string; parent: string; json: string }>).map(({ key, parent, json }) => ({
    key,
    parent,
    json,
  }));
}
