import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { SQLITE_NOW_MS as NOW } from './sqlite-schema.js';
import { conversationTables } from './conversation-tables.js';

/**
 * Creates the conversation-entry, run, execution and payload tables if missing (inside the
 * caller's `BEGIN IMMEDIATE`). Tables are only ever added (the execution table after the others),
 * so an older file gains the new ones on first open; an execution table without the order of its
 * rows' latest writes (`activity`, `attempt`) gains the two nullable columns, its rows unordered
 * (their next write counts as the latest, as every write did before).
 */
export function ensureSqliteConversationSchema(db: DatabaseSync, table: string): void {
  const { entries, runs, executions, payloads } = conversationTables(table);
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
    CREATE TABLE IF NOT EXISTS "${executions}" (
      run_id TEXT NOT NULL,
      execution TEXT NOT NULL,
      open INTEGER NOT NULL,
      touched_at INTEGER NOT NULL,
      activity INTEGER,
      attempt INTEGER,
      PRIMARY KEY (run_id, execution)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS "${payloads}" (
      key TEXT NOT NULL PRIMARY KEY,
      data BLOB NOT NULL,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS "${table}_pl_exp" ON "${payloads}" (expires_at);
  `);
  const columns = db.prepare(`PRAGMA table_info("${executions}")`).all() as Array<{ name: string }>;
  if (!columns.some((c) => c.name === 'attempt')) {
    db.exec(
      `ALTER TABLE "${executions}" ADD COLUMN activity INTEGER; ALTER TABLE "${executions}" ADD COLUMN attempt INTEGER;`,
    );
  }
}

/** The prepared statements of the conversation tables. */
export interface SqliteConversationStatements {
  readonly insertEntry: StatementSync;
  /** A row if the entry stored under `:key` holds `:parent`, `:run` and `:json`. */
  readonly sameEntry: StatementSync;
  readonly touchExecution: StatementSync;
  readonly closeExecution: StatementSync;
  readonly chain: StatementSync;
  readonly putPayload: StatementSync;
  readonly getPayload: StatementSync;
  readonly pruneEntries: StatementSync;
  readonly pruneRuns: StatementSync;
  readonly pruneExecutions: StatementSync;
  readonly prunePayloads: StatementSync;
}

export function sqliteConversationStatements(db: DatabaseSync, table: string): SqliteConversationStatements {
  // An execution (or a run row) lets go of its run once it closed more than the retention ago,
  // or stayed open past the abandonment horizon.
  const GONE = `touched_at <= ${NOW} - CASE WHEN open = 1 THEN :abandoned ELSE :retention END`;
  const { entries, runs, executions, payloads } = conversationTables(table);
  const e = `"${entries}"`;
  const r = `"${runs}"`;
  const x = `"${executions}"`;
  const p = `"${payloads}"`;
  return {
    insertEntry: db.prepare(
      `INSERT INTO ${e} (key, parent, run_id, json) VALUES (:key, :parent, :run, :json) ON CONFLICT (key) DO NOTHING`,
    ),
    sameEntry: db.prepare(
      `SELECT 1 AS same FROM ${e} WHERE key = :key AND parent = :parent AND run_id = :run AND json = :json`,
    ),
    // A write of an older activity or attempt than the row's (a zombie attempt landing late)
    // leaves the row as it is; a write or a row without an order counts as the latest.
    touchExecution: db.prepare(`
      INSERT INTO ${x} AS cur (run_id, execution, open, touched_at, activity, attempt)
      VALUES (:run, :execution, :open, ${NOW}, :activity, :attempt)
      ON CONFLICT (run_id, execution) DO UPDATE SET open = excluded.open, touched_at = excluded.touched_at,
        activity = coalesce(excluded.activity, cur.activity), attempt = coalesce(excluded.attempt, cur.attempt)
      WHERE excluded.activity IS NULL OR cur.activity IS NULL
        OR (excluded.activity, excluded.attempt) >= (cur.activity, cur.attempt)`),
    closeExecution: db.prepare(
      `UPDATE ${x} SET open = 0, touched_at = ${NOW} WHERE run_id = :run AND execution = :execution AND open = 1`,
    ),
    // Parent by parent from the head, each entry once (UNION drops a row already reached, so a
    // cycle planted in the table ends the walk); the caller orders the rows.
    chain: db.prepare(`
      WITH RECURSIVE chain(key, parent) AS (
        SELECT key, parent FROM ${e} WHERE key = :head
        UNION
        SELECT c.key, c.parent FROM ${e} c JOIN chain ON c.key = chain.parent)
      SELECT c.key, c.parent, c.json FROM chain JOIN ${e} c ON c.key = chain.key`),
    putPayload: db.prepare(`
      INSERT INTO ${p} (key, data, expires_at) VALUES (:key, :data, ${NOW} + :retention)
      ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at`),
    getPayload: db.prepare(`SELECT data FROM ${p} WHERE key = :key AND expires_at > ${NOW}`),
    // Entries of runs some execution let go of, and that no execution (nor a run row) still holds.
    pruneEntries: db.prepare(`
      DELETE FROM ${e} WHERE key IN (
        SELECT c.key FROM ${e} c
        WHERE c.run_id IN (SELECT run_id FROM ${x} WHERE ${GONE} UNION SELECT run_id FROM ${r} WHERE ${GONE})
          AND NOT EXISTS (SELECT 1 FROM ${x} WHERE ${x}.run_id = c.run_id AND NOT (${GONE}))
          AND NOT EXISTS (SELECT 1 FROM ${r} WHERE ${r}.run_id = c.run_id AND NOT (${GONE}))
        LIMIT :n)`),
    pruneRuns: db.prepare(`
      DELETE FROM ${r} WHERE run_id IN (
        SELECT run_id FROM ${r} WHERE ${GONE}
          AND NOT EXISTS (SELECT 1 FROM ${e} c WHERE c.run_id = ${r}.run_id) LIMIT :n)`),
    pruneExecutions: db.prepare(`
      DELETE FROM ${x} WHERE (run_id, execution) IN (
        SELECT run_id, execution FROM ${x} WHERE ${GONE}
          AND NOT EXISTS (SELECT 1 FROM ${e} c WHERE c.run_id = ${x}.run_id) LIMIT :n)`),
    prunePayloads: db.prepare(`
      DELETE FROM ${p} WHERE key IN (SELECT key FROM ${p} WHERE expires_at <= ${NOW} ORDER BY expires_at LIMIT :n)`),
  };
}
