import { quoteIdentifier } from './postgres-schema.js';
import { conversationTables } from './conversation-tables.js';

/**
 * Creates the conversation-entry, run, execution and payload tables if missing, inside the
 * caller's transaction and advisory lock. Tables are only ever added (the execution table last):
 * an older database gains the new ones when a worker of this version first opens it. An execution
 * table without the order of its rows' latest writes (`activity`, `attempt`) gains the two
 * nullable columns (no rewrite of the table), its rows unordered: their next write counts as the
 * latest, as every write did before. Workers of the earlier layout name their columns, so they
 * keep writing (their writes count as the latest).
 */
export async function ensurePgConversationSchema(
  sql: (text: string, values?: unknown[]) => Promise<unknown[]>,
  schema: string,
  table: string,
): Promise<void> {
  const s = quoteIdentifier(schema, 'schema name');
  const { entries, runs, executions, payloads } = conversationTables(table);
  const q = (name: string) => `${s}.${quoteIdentifier(name, 'table name')}`;
  // Checked first: CREATE ... IF NOT EXISTS and ALTER TABLE lock the table against writes even
  // when there is nothing to do.
  const [found] = (await sql(
    `SELECT to_regclass($1)::text AS found, EXISTS (
       SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'attempt' AND NOT attisdropped
     ) AS ordered`,
    [q(executions)],
  )) as Array<{ found: string | null; ordered: boolean }>;
  if ((found?.found ?? null) !== null) {
    if (found?.ordered !== true) {
      await sql(
        `ALTER TABLE ${q(executions)} ADD COLUMN IF NOT EXISTS activity integer, ADD COLUMN IF NOT EXISTS attempt integer`,
      );
    }
    return;
  }
  await sql(`CREATE TABLE IF NOT EXISTS ${q(entries)} (
    key text COLLATE "C" PRIMARY KEY,
    parent text COLLATE "C" NOT NULL,
    run_id text NOT NULL,
    json text NOT NULL)`);
  await sql(
    `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}_conv_run`, 'index name')} ON ${q(entries)} (run_id)`,
  );
  await sql(`CREATE TABLE IF NOT EXISTS ${q(runs)} (
    run_id text PRIMARY KEY,
    open boolean NOT NULL,
    touched_at timestamptz NOT NULL)`);
  await sql(`CREATE TABLE IF NOT EXISTS ${q(payloads)} (
    key text COLLATE "C" PRIMARY KEY,
    data bytea NOT NULL,
    expires_at timestamptz NOT NULL)`);
  await sql(
    `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}_pl_exp`, 'index name')} ON ${q(payloads)} (expires_at)`,
  );
  await sql(`CREATE TABLE IF NOT EXISTS ${q(executions)} (
    run_id text NOT NULL,
    execution text NOT NULL,
    open boolean NOT NULL,
    touched_at timestamptz NOT NULL,
    activity integer,
    attempt integer,
    PRIMARY KEY (run_id, execution))`);
}

/** The SQL of the conversation tables of one store. */
export interface PgConversationStatements {
  /**
   * $1 keys, $2 parents, $3 JSON texts (arrays), $4 run id, $5 execution, $6 open, $7 previous
   * execution (or null; never $5), $8 and $9 the write's activity and attempt (or null): one
   * statement, so entries and executions move together. Writes nothing and answers the keys
   * stored with other content when there are any.
   */
  readonly append: string;
  /**
   * The appends of several runs (each run at most once) as one statement: $1 item numbers, $2
   * keys, $3 parents, $4 JSON texts, one element per entry; $5 item numbers, $6 run ids, $7
   * executions, $8 opens, $9 previous executions, $10 activities, $11 attempts, one element per
   * item. Each item is decided as {@link PgConversationStatements.append} decides it alone;
   * answers `n, key` of each item refused for a planted entry (that item writes nothing).
   */
  readonly appendMany: string;
  /** $1 head. */
  readonly chain: string;
  /** $1 key, $2 data, $3 retention ms. */
  readonly putPayload: string;
  /** $1 key. */
  readonly getPayload: string;
  /** $1 limit, $2 retention ms, $3 abandonment ms. */
  readonly pruneEntries: string;
  readonly pruneRuns: string;
  readonly pruneExecutions: string;
  /** $1 limit. */
  readonly prunePayloads: string;
}

const MS = `* interval '1 millisecond'`;
// An execution (or a run row) lets go of its run once it closed more than the retention ago,
// or stayed open past the abandonment horizon.
const GONE = `touched_at <= now() - (CASE WHEN open THEN $3 ELSE $2 END)::float8 ${MS}`;

// An execution row takes a write of its activity and attempt or a later one: a write of an older
// one (a zombie attempt landing late) leaves it as it is. A write or a row without an order counts
// as the latest.
const LATEST_WRITE_DECIDES = `
  ON CONFLICT (run_id, execution) DO UPDATE SET open = excluded.open, touched_at = excluded.touched_at,
    activity = coalesce(excluded.activity, cur.activity), attempt = coalesce(excluded.attempt, cur.attempt)
  WHERE excluded.activity IS NULL OR cur.activity IS NULL
    OR (excluded.activity, excluded.attempt) >= (cur.activity, cur.attempt)
  RETURNING 1`;

export function pgConversationStatements(schema: string, table: string): PgConversationStatements {
  const s = quoteIdentifier(schema, 'schema name');
  const { entries, runs, executions, payloads } = conversationTables(table);
  const e = `${s}.${quoteIdentifier(entries, 'table name')}`;
  const r = `${s}.${quoteIdentifier(runs, 'table name')}`;
  const x = `${s}.${quoteIdentifier(executions, 'table name')}`;
  const p = `${s}.${quoteIdentifier(payloads, 'table name')}`;
  return {
    // `planted` sees the rows stored before the statement: a key held with other content stops
    // every write of it (a concurrent writer of the same key writes the same content).
    append: `
      WITH input AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS i(k, pa, j)),
      planted AS (
        SELECT c.key FROM input JOIN ${e} c ON c.key = input.k
        WHERE c.parent <> input.pa OR c.json <> input.j OR c.run_id <> $4),
      written AS (
        INSERT INTO ${e} (key, parent, run_id, json)
        SELECT k, pa, $4, j FROM input WHERE NOT EXISTS (SELECT 1 FROM planted)
        ON CONFLICT (key) DO NOTHING RETURNING 1),
      touched AS (
        INSERT INTO ${x} AS cur (run_id, execution, open, touched_at, activity, attempt)
        SELECT $4::text, $5::text, $6::boolean, now(), $8::integer, $9::integer WHERE NOT EXISTS (SELECT 1 FROM planted)
        ${LATEST_WRITE_DECIDES}),
      ended AS (
        UPDATE ${x} SET open = false, touched_at = now()
        WHERE run_id = $4 AND execution = $7 AND open AND NOT EXISTS (SELECT 1 FROM planted) RETURNING 1)
      SELECT key FROM planted`,
    // As `append`, item by item: a planted entry stops its own item only. Entries and execution
    // rows are inserted in key order, as the claims are, so two workers' batches mostly wait for
    // each other; a deadlock the server breaks sends each item on its own.
    appendMany: `
      WITH input AS (SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[]) AS i(n, k, pa, j)),
      items AS (
        SELECT * FROM unnest($5::int[], $6::text[], $7::text[], $8::boolean[], $9::text[], $10::int[], $11::int[])
          AS t(n, run_id, execution, open, previous, activity, attempt)),
      planted AS (
        SELECT input.n, c.key FROM input JOIN items USING (n) JOIN ${e} c ON c.key = input.k
        WHERE c.parent <> input.pa OR c.json <> input.j OR c.run_id <> items.run_id),
      clean AS (SELECT * FROM items WHERE n NOT IN (SELECT n FROM planted)),
      written AS (
        INSERT INTO ${e} (key, parent, run_id, json)
        SELECT input.k, input.pa, clean.run_id, input.j FROM input JOIN clean USING (n) ORDER BY input.k
        ON CONFLICT (key) DO NOTHING RETURNING 1),
      touched AS (
        INSERT INTO ${x} AS cur (run_id, execution, open, touched_at, activity, attempt)
        SELECT run_id, execution, open, now(), activity, attempt FROM clean ORDER BY run_id, execution
        ${LATEST_WRITE_DECIDES}),
      ended AS (
        UPDATE ${x} AS prev SET open = false, touched_at = now() FROM clean
        WHERE prev.run_id = clean.run_id AND prev.execution = clean.previous AND prev.open RETURNING 1)
      SELECT n, key FROM planted`,
    // Parent by parent from the head, each entry once (UNION drops a row already reached, so a
    // cycle planted in the table ends the walk); the caller orders the rows.
    chain: `
      WITH RECURSIVE chain(key, parent) AS (
        SELECT key, parent FROM ${e} WHERE key = $1
        UNION
        SELECT c.key, c.parent FROM ${e} c JOIN chain ON c.key = chain.parent)
      SELECT c.key, c.parent, c.json FROM chain JOIN ${e} c ON c.key = chain.key`,
    putPayload: `
      INSERT INTO ${p} (key, data, expires_at) VALUES ($1, $2, now() + $3::float8 ${MS})
      ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at`,
    getPayload: `SELECT data FROM ${p} WHERE key = $1 AND expires_at > now()`,
    // Entries of runs some execution let go of, and that no execution (nor a run row) still holds.
    pruneEntries: `
      DELETE FROM ${e} WHERE key IN (
        SELECT c.key FROM ${e} c
        WHERE c.run_id IN (SELECT run_id FROM ${x} WHERE ${GONE} UNION SELECT run_id FROM ${r} WHERE ${GONE})
          AND NOT EXISTS (SELECT 1 FROM ${x} WHERE ${x}.run_id = c.run_id AND NOT (${GONE}))
          AND NOT EXISTS (SELECT 1 FROM ${r} WHERE ${r}.run_id = c.run_id AND NOT (${GONE}))
        LIMIT $1)`,
    pruneRuns: `
      DELETE FROM ${r} WHERE run_id IN (
        SELECT run_id FROM ${r} WHERE ${GONE}
          AND NOT EXISTS (SELECT 1 FROM ${e} c WHERE c.run_id = ${r}.run_id) LIMIT $1)`,
    pruneExecutions: `
      DELETE FROM ${x} WHERE (run_id, execution) IN (
        SELECT run_id, execution FROM ${x} WHERE ${GONE}
          AND NOT EXISTS (SELECT 1 FROM ${e} c WHERE c.run_id = ${x}.run_id) LIMIT $1)`,
    prunePayloads: `
      DELETE FROM ${p} WHERE key IN (
        SELECT key FROM ${p} WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
  };
}
