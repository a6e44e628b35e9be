import type { PoolClient } from 'pg';
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

/** Quotes a schema or table name after checking it: letters, digits, underscores, at most 63. */
export function quoteIdentifier(name: string, what: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new EffectStoreSchemaError(
      `Invalid ${what} "${name}": use 1 to 63 letters, digits or underscores, not starting with a digit.`,
    );
  }
  return `"${name}"`;
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
export async function ensurePgSchema(client: PoolClient, schema: string, table: string): Promise<void> {
  const qualified = `${quoteIdentifier(schema, 'schema name')}.${quoteIdentifier(table, 'table name')}`;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`chamvi_effects:${schema}.${table}`]);
    const found = await client.query<{ column_name: string; data_type: string }>(
      'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
      [schema, table],
    );
    if (found.rows.length === 0) {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema, 'schema name')}`);
      await client.query(`
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
      await client.query(
        `CREATE INDEX ${quoteIdentifier(`${table}_expires_at`.slice(0, 63), 'index name')} ON ${qualified} (expires_at) WHERE origin IS NOT NULL`,
      );
    } else {
      const types = new Map(found.rows.map((c) => [c.column_name, c.data_type]));
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
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
