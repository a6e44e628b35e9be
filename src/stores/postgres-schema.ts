import type { PgPoolClient } from './postgres-types.js';
import { EffectStoreSchemaError } from '../errors/errors.js';
import { ensurePgConversationSchema } from './postgres-conversation.js';

/** Columns of the effects table and their `information_schema` data types; the check compares both. */
const COLUMNS: Readonly<Record<string, string>> = {
  id: 'text',
  key: 'text',
  owner: 'text',
  previous_owner: 'text',
  fence: 'bigint',
  lease_until: 'timestamp with time zone',
  tool_name: 'text',
  run_id: 'text',
  attempt: 'integer',
  fingerprint: 'text',
  origin: 'text',
  result: 'text',
  result_undefined: 'boolean',
  recorded_at: 'timestamp with time zone',
  expires_at: 'timestamp with time zone',
  unserializable: 'text',
};

/**
 * Columns later versions added. A table that lacks only these is migrated in place (see
 * {@link migratePgTable}) instead of refused, so a store upgraded under existing data keeps it.
 */
const ADDED_COLUMNS: ReadonlySet<string> = new Set(['unserializable']);

/** Key of the result object by which the earlier layout marked an unserialisable result in band. */
const LEGACY_UNSERIALIZABLE_MARK = '$chamviUnserializableResult';

/** Longest identifier PostgreSQL keeps: longer ones are silently truncated to 63 bytes. */
const MAX_PG_IDENTIFIER = 63;

/** Suffixes of the index names derived from the table name. */
export const INDEX_SUFFIXES = { expiresAt: '_expires_at', claims: '_claims' } as const;

/**
 * Longest table name, 52: the table name plus its longest derived suffix (`_expires_at`) must fit
 * in PostgreSQL's 63 bytes, or the index name would be truncated, and for a 63-character table it
 * would be truncated to the table's own name and collide with it.
 */
export const MAX_PG_TABLE_NAME_LENGTH =
  MAX_PG_IDENTIFIER - Math.max(...Object.values(INDEX_SUFFIXES).map((suffix) => suffix.length));

/**
 * Quotes a schema or table name after checking it: letters, digits, underscores, at most `max`
 * characters (63 for a schema, {@link MAX_PG_TABLE_NAME_LENGTH} for a table).
 */
export function quoteIdentifier(name: string, what: string, max = MAX_PG_IDENTIFIER): string {
  if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || name.length > max) {
    const why =
      typeof name === 'string' && name.length > max && max < MAX_PG_IDENTIFIER
        ? ` (its index names add up to ${MAX_PG_IDENTIFIER - max} characters, and PostgreSQL truncates names beyond ${MAX_PG_IDENTIFIER})`
        : '';
    throw new EffectStoreSchemaError(
      `Invalid ${what} "${String(name).slice(0, 80)}": use 1 to ${max} letters, digits or underscores, not starting with a digit${why}.`,
    );
  }
  return `"${name}"`;
}

/** {@link quoteIdentifier} for the table name: at most {@link MAX_PG_TABLE_NAME_LENGTH} characters. */
export function quoteTableName(table: string): string {
  return quoteIdentifier(table, 'table name', MAX_PG_TABLE_NAME_LENGTH);
}

/**
 * Creates the schema, the effects table and its expiry and claim indexes if missing, else checks
 * the table's columns, migrating a table of an earlier version that lacks only newer ones. Runs in
 * one transaction under an advisory lock, so workers starting together do not race on
 * `CREATE … IF NOT EXISTS` (which is not safe against itself in PostgreSQL) or on the migration.
 *
 * The primary key `id` uses the C collation: byte order makes prefix range scans (`list`) use
 * the index and keeps comparisons cheap.
 *
 * @throws EffectStoreSchemaError when an existing table lacks a column or types one differently.
 */
export async function ensurePgSchema(
  client: PgPoolClient,
  schema: string,
  table: string,
  queryTimeoutMs: number,
): Promise<void> {
  const qualified = `${quoteIdentifier(schema, 'schema name')}.${quoteTableName(table)}`;
  // Every statement under the store's client-side timeout: a stalled connection fails the first call.
  const sql = async <R>(text: string, values?: unknown[]): Promise<R[]> =>
    (await client.query({ text, ...(values === undefined ? {} : { values }), query_timeout: queryTimeoutMs }))
      .rows as R[];
  await sql('BEGIN');
  try {
    await sql('SELECT pg_advisory_xact_lock(hashtext($1))', [`chamvi_effects:${schema}.${table}`]);
    const found = await sql<{ column_name: string; data_type: string }>(
      'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
      [schema, table],
    );
    if (found.length === 0) {
      await sql(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema, 'schema name')}`);
      await sql(`
        CREATE TABLE ${qualified} (
          id text COLLATE "C" PRIMARY KEY,
          key text NOT NULL,
          owner text,
          previous_owner text,
          fence bigint NOT NULL,
          lease_until timestamptz,
          tool_name text NOT NULL,
          run_id text,
          attempt integer,
          fingerprint text,
          origin text,
          result text,
          result_undefined boolean NOT NULL DEFAULT false,
          recorded_at timestamptz,
          expires_at timestamptz,
          unserializable text
        )`);
      await sql(
        `CREATE INDEX ${quoteIdentifier(table + INDEX_SUFFIXES.expiresAt, 'index name')} ON ${qualified} (expires_at) WHERE origin IS NOT NULL`,
      );
      await sql(claimIndex(qualified, table));
    } else {
      const types = new Map(found.map((c) => [c.column_name, c.data_type]));
      const missing = Object.keys(COLUMNS).filter((name) => !types.has(name));
      const problems = Object.entries(COLUMNS)
        .filter(([name, type]) => types.get(name) !== type && !(ADDED_COLUMNS.has(name) && !types.has(name)))
        .map(([name, type]) =>
          types.has(name) ? `${name} is ${types.get(name)}, expected ${type}` : `${name} is missing`,
        );
      if (problems.length > 0) {
        throw new EffectStoreSchemaError(
          `Table ${schema}.${table} is not a compatible effect store table (${problems.join('; ')}). Point the store at another schema or table, or migrate the table.`,
        );
      }
      if (missing.length > 0) await migratePgTable(sql, qualified, missing);
      // Checked, not CREATE INDEX IF NOT EXISTS: that would lock the table against writes even when the index exists.
      const [claims] = await sql<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
        `${quoteIdentifier(schema, 'schema name')}.${quoteIdentifier(table + INDEX_SUFFIXES.claims, 'index name')}`,
      ]);
      if ((claims?.found ?? null) === null) await sql(claimIndex(qualified, table));
    }
    await ensurePgConversationSchema(sql, schema, table);
    await sql('COMMIT');
  } catch (error) {
    await sql('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The partial index `prune` finds abandoned claims by: only unfinished rows, so it stays small. */
function claimIndex(qualified: string, table: string): string {
  return `CREATE INDEX ${quoteIdentifier(table + INDEX_SUFFIXES.claims, 'index name')} ON ${qualified} (lease_until) WHERE origin IS NULL`;
}

/**
 * Brings a table of an earlier version up to date, inside the caller's transaction and advisory
 * lock. Earlier versions' statements name their columns, so their workers keep running on the
 * migrated table (a rolling upgrade).
 *
 * - `unserializable` is added (a nullable column: no rewrite of the table). Records the earlier
 *   layout marked in band (a result object whose `$chamviUnserializableResult` is a string) meant exactly
 *   that there, so they move to the column.
 * - Claims released by an earlier version kept no time (`lease_until` NULL); they get the
 *   migration's time, so `prune` can remove them one retention later, like every other ended claim.
 */
async function migratePgTable(
  sql: (text: string, values?: unknown[]) => Promise<unknown[]>,
  qualified: string,
  missing: readonly string[],
): Promise<void> {
  if (missing.includes('unserializable')) {
    await sql(`ALTER TABLE ${qualified} ADD COLUMN unserializable text`);
    // The LIKE keeps the JSON parse to the rows written that way (json, not jsonb: it takes any escape).
    await sql(
      `UPDATE ${qualified} SET unserializable = result::json ->> $1, result = NULL, result_undefined = true
       WHERE origin IS NOT NULL AND result LIKE $2 AND json_typeof(result::json -> $1) = 'string'`,
      [LEGACY_UNSERIALIZABLE_MARK, `{"${LEGACY_UNSERIALIZABLE_MARK}":%`],
    );
  }
  await sql(`UPDATE ${qualified} SET lease_until = now() WHERE origin IS NULL AND lease_until IS NULL`);
}
