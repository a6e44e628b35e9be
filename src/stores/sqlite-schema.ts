import type { DatabaseSync } from 'node:sqlite';
import { EffectStoreSchemaError } from '../errors/errors.js';
import { ensureSqliteConversationSchema } from './sqlite-conversation.js';

/** Oldest SQLite the store works with: 3.35 added `RETURNING`, which every conditional write uses. */
export const MIN_SQLITE_VERSION = '3.35.0';

/** The database's clock in epoch ms (`'now'` is fixed within one statement, so one write sees one time). */
export const SQLITE_NOW_MS = `CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)`;

/** The database's clock as ISO 8601 with milliseconds, like `Date.prototype.toISOString`. */
export const SQLITE_NOW_ISO = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;

/** Columns of the effects table and their declared types; the check compares both. */
const COLUMNS: Readonly<Record<string, string>> = {
  id: 'TEXT',
  key: 'TEXT',
  owner: 'TEXT',
  previous_owner: 'TEXT',
  fence: 'INTEGER',
  lease_until: 'INTEGER',
  tool_name: 'TEXT',
  run_id: 'TEXT',
  attempt: 'INTEGER',
  fingerprint: 'TEXT',
  origin: 'TEXT',
  result: 'TEXT',
  result_undefined: 'INTEGER',
  recorded_at: 'TEXT',
  expires_at: 'INTEGER',
  unserializable: 'TEXT',
};

/**
 * Columns later versions added. A table that lacks only these is migrated in place (see
 * {@link migrateSqliteTable}) instead of refused, so a store upgraded under existing data keeps it.
 */
const ADDED_COLUMNS: ReadonlySet<string> = new Set(['unserializable']);

/** Key of the result object by which the earlier layout marked an unserialisable result in band. */
const LEGACY_UNSERIALIZABLE_MARK = '$chamviUnserializableResult';

/** A table name usable unquoted-safe inside double quotes: letters, digits, underscores. */
export function checkIdentifier(name: string, what: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new EffectStoreSchemaError(
      `Invalid ${what} "${name}": use 1 to 63 letters, digits or underscores, not starting with a digit.`,
    );
  }
  return name;
}

/**
 * Creates the conversation tables (see `sqlite-conversation.ts`) and the effects table (and its
 * expiry and claim indexes) if missing, else checks that the effects table has
 * the expected columns, migrating a table of an earlier version that lacks only newer ones. Runs
 * inside `BEGIN IMMEDIATE` so that two processes opening a new file at once do not both try to
 * create (or migrate) it.
 *
 * @throws EffectStoreSchemaError on an SQLite older than {@link MIN_SQLITE_VERSION} or a table
 *   with missing or differently typed columns.
 */
export function ensureSqliteSchema(db: DatabaseSync, table: string, where: string): void {
  const version = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  if (compareVersions(version, MIN_SQLITE_VERSION) < 0) {
    throw new EffectStoreSchemaError(
      `SQLite ${version} is too old for the effect store at ${where}: it needs ${MIN_SQLITE_VERSION} or later (RETURNING). Use Node 22.13+ (its built-in node:sqlite) or the PostgreSQL store.`,
    );
  }
  ensureSqliteConversationSchema(db, table);
  const found = db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string; type: string }[];
  if (found.length === 0) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS "${table}" (
        id TEXT NOT NULL PRIMARY KEY,
        key TEXT NOT NULL,
        owner TEXT,
        previous_owner TEXT,
        fence INTEGER NOT NULL,
        lease_until INTEGER,
        tool_name TEXT NOT NULL,
        run_id TEXT,
        attempt INTEGER,
        fingerprint TEXT,
        origin TEXT,
        result TEXT,
        result_undefined INTEGER NOT NULL DEFAULT 0,
        recorded_at TEXT,
        expires_at INTEGER,
        unserializable TEXT
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS "${table}_expires_at" ON "${table}" (expires_at) WHERE origin IS NOT NULL;
      CREATE INDEX IF NOT EXISTS "${table}_claims" ON "${table}" (lease_until) WHERE origin IS NULL;
    `);
    return;
  }
  const types = new Map(found.map((c) => [c.name, c.type.toUpperCase()]));
  const missing = Object.keys(COLUMNS).filter((name) => !types.has(name));
  const problems = Object.entries(COLUMNS)
    .filter(([name, type]) => types.get(name) !== type && !(ADDED_COLUMNS.has(name) && !types.has(name)))
    .map(([name, type]) =>
      types.has(name) ? `${name} is ${types.get(name)}, expected ${type}` : `${name} is missing`,
    );
  if (problems.length > 0) {
    throw new EffectStoreSchemaError(
      `Table "${table}" in ${where} is not a compatible effect store table (${problems.join('; ')}). Point the store at another table (option "table") or file, or migrate the table.`,
    );
  }
  if (missing.length > 0) migrateSqliteTable(db, table, missing);
}

/**
 * Brings a table of an earlier version up to date, inside the caller's `BEGIN IMMEDIATE` (so one
 * process migrates and the others then find the new columns). Earlier versions' statements name
 * their columns, so they keep working on the migrated table.
 *
 * - `unserializable` is added. Records the earlier layout marked in band (a result object whose
 *   `$chamviUnserializableResult` is a string) meant exactly that there, so they move to the column.
 * - Claims released by an earlier version kept no time (`lease_until` NULL); they get the
 *   migration's time, so `prune` can remove them one retention later, like every other ended claim.
 * - The index `prune` uses for claims is created.
 */
function migrateSqliteTable(db: DatabaseSync, table: string, missing: readonly string[]): void {
  const t = `"${table}"`;
  const mark = `'$."${LEGACY_UNSERIALIZABLE_MARK}"'`;
  if (missing.includes('unserializable')) {
    db.exec(`ALTER TABLE ${t} ADD COLUMN unserializable TEXT`);
    db.exec(`
      UPDATE ${t} SET unserializable = json_extract(result, ${mark}), result = NULL, result_undefined = 1
      WHERE origin IS NOT NULL AND json_valid(result) AND json_type(result, ${mark}) = 'text'`);
  }
  db.exec(`UPDATE ${t} SET lease_until = ${SQLITE_NOW_MS} WHERE origin IS NULL AND lease_until IS NULL`);
  db.exec(`CREATE INDEX IF NOT EXISTS "${table}_claims" ON ${t} (lease_until) WHERE origin IS NULL`);
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
