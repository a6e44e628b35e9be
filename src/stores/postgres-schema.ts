import type { PgPoolClient } from './postgres-types.js';
import { EffectStoreSchemaError } from '../errors/errors.js';

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
};

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
 * Creates the schema, the effects table and its expiry index if missing, else checks the table's
 * columns. Runs in one transaction under an advisory lock, so workers starting together do not
 * race on `CREATE … IF NOT EXISTS` (which is not safe against itself in PostgreSQL).
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
          expires_at timestamptz
        )`);
      await sql(
        `CREATE INDEX ${quoteIdentifier(table + INDEX_SUFFIXES.expiresAt, 'index name')} ON ${qualified} (expires_at) WHERE origin IS NOT NULL`,
      );
    } else {
      const types = new Map(found.map((c) => [c.column_name, c.data_type]));
      const problems = Object.entries(COLUMNS)
        .filter(([name, type]) => types.get(name) !== type)
        .map(([name, type]) =>
          types.has(name) ? `${name} is ${types.get(name)}, expected ${type}` : `${name} is missing`,
        );
      if (problems.length > 0) {
        throw new EffectStoreSchemaError(
          `Table ${schema}.${table} is not a compatible effect store table (${problems.join('; ')}). Point the store at another schema or table, or migrate the table.`,
        );
      }
    }
    await sql('COMMIT');
  } catch (error) {
    await sql('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
