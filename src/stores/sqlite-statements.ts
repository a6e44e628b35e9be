import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { fromRow } from './effect-row.js';
import type { EffectOrigin, EffectRecord } from './effect-store.js';
import { sqliteConversationStatements, type SqliteConversationStatements } from './sqlite-conversation.js';
import { SQLITE_NOW_ISO as NOW_ISO, SQLITE_NOW_MS as NOW } from './sqlite-schema.js';

/** A finished record's row as the SQLite statements return it (times in epoch ms). */
export interface SqliteRow {
  readonly key: string;
  readonly tool_name: string;
  readonly origin: EffectOrigin;
  readonly result: string | null;
  readonly result_undefined: number;
  readonly recorded_at: string;
  readonly expires_at: number | null;
  readonly run_id: string | null;
  readonly attempt: number | null;
  readonly fingerprint: string | null;
  readonly unserializable: string | null;
}

/** The prepared statements of one open SQLite effect store. */
export interface SqliteStatements {
  readonly get: StatementSync;
  readonly put: StatementSync;
  readonly claim: StatementSync;
  readonly holder: StatementSync;
  readonly complete: StatementSync;
  readonly release: StatementSync;
  readonly renew: StatementSync;
  readonly prune: StatementSync;
  readonly pruneClaims: StatementSync;
  readonly list: StatementSync;
  /** The conversation tables' statements. */
  readonly conversation: SqliteConversationStatements;
}

const RECORD =
  'key, tool_name, origin, result, result_undefined, recorded_at, expires_at, run_id, attempt, fingerprint, unserializable';
// A row is finished while it has an origin and has not expired; expired rows count as absent.
const LIVE_RECORD = `origin IS NOT NULL AND (expires_at IS NULL OR expires_at > ${NOW})`;
const FENCE = 'id = :id AND key = :key AND owner = :owner AND fence = :fence AND origin IS NULL';

/**
 * Prepares every statement of the store. Each write is one statement whose condition carries
 * the whole decision (lease expired, owner and fence match, no finished record), evaluated on
 * the database's clock.
 */
export function sqliteStatements(db: DatabaseSync, table: string): SqliteStatements {
  const t = `"${table}"`;
  return {
    get: db.prepare(`SELECT ${RECORD} FROM ${t} WHERE id = :id AND ${LIVE_RECORD}`),
    put: db.prepare(`
      INSERT INTO ${t} (id, key, owner, fence, tool_name, run_id, attempt, fingerprint,
                        origin, result, result_undefined, recorded_at, expires_at, unserializable)
      VALUES (:id, :key, NULL, 0, :tool, :run, :attempt, :fp,
              :origin, :result, :ru, COALESCE(:recordedAt, ${NOW_ISO}), ${NOW} + :retention, :unser)
      ON CONFLICT (id) DO UPDATE SET
        owner = NULL, lease_until = NULL, tool_name = excluded.tool_name, run_id = excluded.run_id,
        attempt = excluded.attempt, fingerprint = excluded.fingerprint, origin = excluded.origin,
        result = excluded.result, result_undefined = excluded.result_undefined,
        recorded_at = excluded.recorded_at, expires_at = excluded.expires_at,
        unserializable = excluded.unserializable
      WHERE ${t}.key = excluded.key AND (${t}.origin IS NULL OR ${t}.expires_at <= ${NOW})
      RETURNING ${RECORD}`),
    claim: db.prepare(`
      INSERT INTO ${t} (id, key, owner, previous_owner, fence, lease_until, tool_name, run_id, attempt, fingerprint)
      VALUES (:id, :key, :owner, NULL, 1, ${NOW} + :lease, :tool, :run, :attempt, :fp)
      ON CONFLICT (id) DO UPDATE SET
        owner = excluded.owner, previous_owner = ${t}.owner, fence = ${t}.fence + 1,
        lease_until = excluded.lease_until, tool_name = excluded.tool_name, run_id = excluded.run_id,
        attempt = excluded.attempt, fingerprint = excluded.fingerprint, origin = NULL, result = NULL,
        result_undefined = 0, recorded_at = NULL, expires_at = NULL, unserializable = NULL
      WHERE ${t}.key = excluded.key AND (
        (${t}.origin IS NULL AND (${t}.owner IS NULL OR ${t}.owner = excluded.owner OR ${t}.lease_until <= ${NOW}))
        OR (${t}.origin IS NOT NULL AND ${t}.expires_at <= ${NOW}))
      RETURNING fence, previous_owner`),
    holder: db.prepare(`SELECT key, owner, lease_until - ${NOW} AS remaining FROM ${t} WHERE id = :id`),
    complete: db.prepare(`
      UPDATE ${t} SET owner = NULL, lease_until = NULL, tool_name = :tool, run_id = :run, attempt = :attempt,
        fingerprint = :fp, origin = :origin, result = :result, result_undefined = :ru,
        recorded_at = COALESCE(:recordedAt, ${NOW_ISO}), expires_at = ${NOW} + :retention,
        unserializable = :unser
      WHERE ${FENCE}
      RETURNING ${RECORD}`),
    // A released claim keeps the time it ended in lease_until: prune measures its age from there.
    release: db.prepare(`UPDATE ${t} SET owner = NULL, lease_until = ${NOW} WHERE ${FENCE} RETURNING fence`),
    renew: db.prepare(`UPDATE ${t} SET lease_until = ${NOW} + :lease WHERE ${FENCE} RETURNING fence`),
    prune: db.prepare(`
      DELETE FROM ${t} WHERE id IN (
        SELECT id FROM ${t} WHERE origin IS NOT NULL AND expires_at <= ${NOW} ORDER BY expires_at LIMIT :n)`),
    // Claims that never finished, whose lease ended (expired or released) more than the retention ago.
    pruneClaims: db.prepare(`
      DELETE FROM ${t} WHERE id IN (
        SELECT id FROM ${t} WHERE origin IS NULL AND lease_until <= ${NOW} - :retention ORDER BY lease_until LIMIT :n)`),
    // Plain keys come from a range scan of the primary key; hashed (long) keys are few and checked by their full key.
    list: db.prepare(`
      SELECT ${RECORD} FROM ${t}
      WHERE ((id >= :p AND id < :upper) OR (id >= :hashed AND id < :hashed || char(0x10ffff)))
        AND substr(key, 1, length(:p)) = :p AND ${LIVE_RECORD}`),
    conversation: sqliteConversationStatements(db, table),
  };
}

/** The record of a finished row (epoch-ms times become ISO 8601). */
export function toRecord(row: SqliteRow): EffectRecord {
  return fromRow({
    key: row.key,
    toolName: row.tool_name,
    origin: row.origin,
    result: row.result,
    resultUndefined: row.result_undefined === 1,
    recordedAt: row.recorded_at,
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at).toISOString(),
    runId: row.run_id,
    attempt: row.attempt,
    fingerprint: row.fingerprint,
    unserializable: row.unserializable,
  });
}
