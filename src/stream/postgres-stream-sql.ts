const KEY = 'run_id = $1 AND workflow_id = $2 AND first_execution_run_id = $3';

/**
 * The statements of the PostgreSQL run stream on table `table` (a checked plain identifier). Every
 * statement but `schema`, `layout` and `prune` takes the stream key as `$1` (run id), `$2`
 * (workflow id), `$3` (first execution run id).
 *
 * Table `<table>` holds the batches, keyed by stream and cursor; `<table>_head` holds each
 * stream's last cursor, which prune never deletes, so a stream's cursors only grow even once all
 * its batches are gone (a head lost by hand is rebuilt from the batches that remain).
 */
export function postgresStreamSql(table: string): {
  schema: string;
  layout: string;
  append: string;
  read: string;
  last: string;
  prune: string;
} {
  const t = `"${table}"`;
  const head = `"${table}_head"`;
  const highest = `COALESCE((SELECT MAX(seq) FROM ${t} WHERE ${KEY}), 0)`;
  return {
    schema: `
      CREATE TABLE IF NOT EXISTS ${t} (
        run_id text NOT NULL,
        workflow_id text NOT NULL,
        first_execution_run_id text NOT NULL,
        seq bigint NOT NULL,
        step integer NOT NULL,
        attempt integer NOT NULL,
        execution text NOT NULL,
        parts text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, workflow_id, first_execution_run_id, seq)
      );
      CREATE INDEX IF NOT EXISTS "${table}_created" ON ${t} (created_at);
      CREATE TABLE IF NOT EXISTS ${head} (
        run_id text NOT NULL,
        workflow_id text NOT NULL,
        first_execution_run_id text NOT NULL,
        seq bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, workflow_id, first_execution_run_id)
      );`,
    // Whether the batches table has the stream key (a development build's table has run_id only).
    layout: `SELECT 1 FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'first_execution_run_id'`,
    // The next cursor from the stream's head row, the batch and the notification in one statement.
    // The head row stays locked until the statement commits: a concurrent writer of the stream
    // waits for it and takes the next cursor, so cursors are gap-free in commit order, which is
    // what lets readers resume "after" a cursor. NOTIFY is delivered when the row commits, so a
    // woken reader always finds the batch.
    append: `
      WITH head AS (
        INSERT INTO ${head} AS h (run_id, workflow_id, first_execution_run_id, seq)
        VALUES ($1, $2, $3, ${highest} + 1)
        ON CONFLICT (run_id, workflow_id, first_execution_run_id)
        DO UPDATE SET seq = GREATEST(h.seq, ${highest}) + 1, updated_at = now()
        RETURNING seq
      ), ins AS (
        INSERT INTO ${t} (run_id, workflow_id, first_execution_run_id, seq, step, attempt, execution, parts)
        SELECT $1, $2, $3, seq, $4, $5, $6, $7 FROM head
        RETURNING seq)
      SELECT seq, pg_notify($8, $1) FROM ins`,
    read: `SELECT seq, step, attempt, execution, parts FROM ${t} WHERE ${KEY} AND seq > $4 ORDER BY seq LIMIT $5`,
    last: `SELECT MAX(seq) AS seq FROM ${t} WHERE ${KEY}`,
    prune: `DELETE FROM ${t} WHERE created_at <= now() - $1 * interval '1 millisecond'`,
  };
}
