/** The statements of the PostgreSQL run stream on table `table` (a checked plain identifier). */
export function postgresStreamSql(table: string): {
  schema: string;
  append: string;
  read: string;
  last: string;
  prune: string;
} {
  const t = `"${table}"`;
  return {
    schema: `
      CREATE TABLE IF NOT EXISTS ${t} (
        run_id text NOT NULL,
        seq bigint NOT NULL,
        step integer NOT NULL,
        attempt integer NOT NULL,
        execution text NOT NULL,
        parts text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, seq)
      );
      CREATE INDEX IF NOT EXISTS "${table}_created" ON ${t} (created_at);`,
    // The next cursor and the notification in one statement: NOTIFY is delivered when the row
    // commits, so a woken reader always finds the batch. A concurrent writer that computed the
    // same cursor waits on the primary key and fails with 23505 (the caller retries): cursors
    // stay gap-free in commit order, which is what lets readers resume "after" a cursor.
    append: `
      WITH ins AS (
        INSERT INTO ${t} (run_id, seq, step, attempt, execution, parts)
        SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5 FROM ${t} WHERE run_id = $1
        RETURNING seq)
      SELECT seq, pg_notify($6, $1) FROM ins`,
    read: `SELECT seq, step, attempt, execution, parts FROM ${t} WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    last: `SELECT MAX(seq) AS seq FROM ${t} WHERE run_id = $1`,
    prune: `DELETE FROM ${t} WHERE created_at <= now() - $1 * interval '1 millisecond'`,
  };
}
