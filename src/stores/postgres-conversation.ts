import type { ConversationEntry } from '../conversation/conversation-entry.js';
import { quoteIdentifier } from './postgres-schema.js';

/** The conversation tables next to the effects table `table` (suffixes fit the 52-character table name limit). */
export function pgConversationTables(table: string): { entries: string; runs: string; payloads: string } {
  return { entries: `${table}_conv`, runs: `${table}_conv_runs`, payloads: `${table}_payloads` };
}

/**
 * Creates the conversation-entry, run and payload tables if missing, inside the caller's
 * transaction and advisory lock. New in 0.3 and only ever added to: an older database gains
 * them when a worker of this version first opens it, with no migration.
 */
export async function ensurePgConversationSchema(
  sql: (text: string, values?: unknown[]) => Promise<unknown[]>,
  schema: string,
  table: string,
): Promise<void> {
  const s = quoteIdentifier(schema, 'schema name');
  const { entries, runs, payloads } = pgConversationTables(table);
  const q = (name: string) => `${s}.${quoteIdentifier(name, 'table name')}`;
  // Checked first: CREATE ... IF NOT EXISTS locks the table against writes even when it exists.
  const [found] = (await sql('SELECT to_regclass($1)::text AS found', [q(payloads)])) as Array<{
    found: string | null;
  }>;
  if ((found?.found ?? null) !== null) return;
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
}

/** The SQL of the conversation tables of one store. */
export interface PgConversationStatements {
  /** $1 keys, $2 parents, $3 JSON texts (arrays), $4 run id, $5 open: one statement, so entries and run move together. */
  readonly append: string;
  /** $1 head. */
  readonly chain: string;
  /** $1 key, $2 data, $3 retention ms. */
  readonly putPayload: string;
  /** $1 key. */
  readonly getPayload: string;
  /** $1 limit, $2 retention ms, $3 abandonment ms. */
  readonly pruneEntries: string;
  readonly pruneRuns: string;
  /** $1 limit. */
  readonly prunePayloads: string;
}

const MS = `* interval '1 millisecond'`;
const GONE = `touched_at <= now() - (CASE WHEN open THEN $3 ELSE $2 END)::float8 ${MS}`;

export function pgConversationStatements(schema: string, table: string): PgConversationStatements {
  const s = quoteIdentifier(schema, 'schema name');
  const { entries, runs, payloads } = pgConversationTables(table);
  const e = `${s}.${quoteIdentifier(entries, 'table name')}`;
  const r = `${s}.${quoteIdentifier(runs, 'table name')}`;
  const p = `${s}.${quoteIdentifier(payloads, 'table name')}`;
  return {
    append: `
      WITH written AS (
        INSERT INTO ${e} (key, parent, run_id, json)
        SELECT k, pa, $4, j FROM unnest($1::text[], $2::text[], $3::text[]) AS x(k, pa, j)
        ON CONFLICT (key) DO NOTHING RETURNING 1)
      INSERT INTO ${r} AS r (run_id, open, touched_at) VALUES ($4, $5, now())
      ON CONFLICT (run_id) DO UPDATE SET open = excluded.open, touched_at = excluded.touched_at`,
    chain: `
      WITH RECURSIVE chain(key, parent, json, depth) AS (
        SELECT key, parent, json, 0 FROM ${e} WHERE key = $1
        UNION ALL
        SELECT c.key, c.parent, c.json, chain.depth + 1 FROM ${e} c JOIN chain ON c.key = chain.parent)
      SELECT key, parent, json FROM chain ORDER BY depth DESC`,
    putPayload: `
      INSERT INTO ${p} (key, data, expires_at) VALUES ($1, $2, now() + $3::float8 ${MS})
      ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at`,
    getPayload: `SELECT data FROM ${p} WHERE key = $1 AND expires_at > now()`,
    pruneEntries: `
      DELETE FROM ${e} WHERE key IN (
        SELECT c.key FROM ${e} c JOIN ${r} USING (run_id) WHERE ${GONE} LIMIT $1)`,
    pruneRuns: `
      DELETE FROM ${r} WHERE run_id IN (
        SELECT run_id FROM ${r} WHERE ${GONE}
          AND NOT EXISTS (SELECT 1 FROM ${e} c WHERE c.run_id = ${r}.run_id) LIMIT $1)`,
    prunePayloads: `
      DELETE FROM ${p} WHERE key IN (
        SELECT key FROM ${p} WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
  };
}

/** Entries of chain rows. */
export function pgEntries(rows: readonly unknown[]): ConversationEntry[] {
  return (rows as Array<{ key: string; parent: string; json: string }>).map(({ key, parent, json }) => ({
    key,
    parent,
    json,
  }));
}
