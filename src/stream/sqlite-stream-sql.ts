import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { EffectStoreSchemaError } from '../errors/errors.js';
import { SQLITE_NOW_MS as NOW } from '../stores/sqlite-schema.js';

/** The prepared statements of the SQLite run stream. Named parameters: `:run`, `:workflow`, `:first` (the stream key). */
export interface SqliteStreamStatements {
  /** Takes the stream's next cursor (its head row, created or raised) and returns it as `seq`. */
  readonly next: StatementSync;
  readonly insert: StatementSync;
  readonly read: StatementSync;
  readonly last: StatementSync;
  readonly prune: StatementSync;
}

const KEY = 'run_id = :run AND workflow_id = :workflow AND first_execution_run_id = :first';

/**
 * Creates the stream's tables in `db` if missing and prepares its statements. Table `<table>`
 * holds the batches, one row each, keyed by stream and cursor; `<table>_head` holds each stream's
 * last cursor, which prune never deletes, so a stream's cursors only grow even once all its
 * batches are gone. A head lost by hand is rebuilt from the batches that remain.
 *
 * @throws EffectStoreSchemaError when `<table>` exists without the stream key's columns (a table of
 *   a development build, whose batches name no workflow).
 */
export function prepareSqliteStream(db: DatabaseSync, table: string, where: string): SqliteStreamStatements {
  const t = `"${table}"`;
  const head = `"${table}_head"`;
  db.exec(`
    CREATE TABLE IF NOT EXISTS ${t} (
      run_id TEXT NOT NULL,
      workflow_id TEXT NOT NULL,
      first_execution_run_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      step INTEGER NOT NULL,
      attempt INTEGER NOT NULL,
      execution TEXT NOT NULL,
      parts TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (run_id, workflow_id, first_execution_run_id, seq)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS "${table}_created" ON ${t} (created_at);
    CREATE TABLE IF NOT EXISTS ${head} (
      run_id TEXT NOT NULL,
      workflow_id TEXT NOT NULL,
      first_execution_run_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      PRIMARY KEY (run_id, workflow_id, first_execution_run_id)
    ) WITHOUT ROWID;`);
  const columns = (db.prepare(`PRAGMA table_info(${t})`).all() as Array<{ name: string }>).map((c) => c.name);
  if (!columns.includes('first_execution_run_id')) {
    throw new EffectStoreSchemaError(
      `The run stream table "${table}" at ${where} has batches without workflow identity (a development build's layout): drop it (it holds only what pages replay) or choose another table.`,
    );
  }
  const highest = `COALESCE((SELECT MAX(seq) FROM ${t} WHERE ${KEY}), 0)`;
  return {
    next: db.prepare(`
      INSERT INTO ${head} (run_id, workflow_id, first_execution_run_id, seq, updated_at)
      VALUES (:run, :workflow, :first, ${highest} + 1, ${NOW})
      ON CONFLICT (run_id, workflow_id, first_execution_run_id)
      DO UPDATE SET seq = MAX(seq, ${highest}) + 1, updated_at = excluded.updated_at
      RETURNING seq`),
    insert: db.prepare(`
      INSERT INTO ${t} (run_id, workflow_id, first_execution_run_id, seq, step, attempt, execution, parts, created_at)
      VALUES (:run, :workflow, :first, :seq, :step, :attempt, :execution, :parts, ${NOW})`),
    read: db.prepare(
      `SELECT seq, step, attempt, execution, parts FROM ${t} WHERE ${KEY} AND seq > :after ORDER BY seq LIMIT :limit`,
    ),
    last: db.prepare(`SELECT MAX(seq) AS seq FROM ${t} WHERE ${KEY}`),
    prune: db.prepare(`DELETE FROM ${t} WHERE created_at <= ${NOW} - :retention`),
  };
}
