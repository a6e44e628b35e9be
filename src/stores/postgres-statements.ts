import { fromRow } from './effect-row.js';
import type { EffectOrigin, EffectRecord } from './effect-store.js';

/** A finished record's row as the PostgreSQL statements return it. */
export interface PgRecordRow {
  readonly key: string;
  readonly tool_name: string;
  readonly origin: EffectOrigin;
  readonly result: string | null;
  readonly result_undefined: boolean;
  readonly recorded_at: Date;
  readonly expires_at: Date | null;
  readonly run_id: string | null;
  readonly attempt: number | null;
  readonly fingerprint: string | null;
  readonly unserializable: string | null;
}

/** The SQL of one PostgreSQL effect store, for one schema-qualified table. */
export interface PgStatements {
  readonly get: string;
  readonly put: string;
  readonly claim: string;
  readonly holder: string;
  readonly complete: string;
  readonly release: string;
  readonly renew: string;
  readonly prune: string;
  readonly pruneClaims: string;
  readonly list: string;
}

export const RECORD =
  'key, tool_name, origin, result, result_undefined, recorded_at, expires_at, run_id, attempt, fingerprint, unserializable';
const LIVE_RECORD = 'origin IS NOT NULL AND (expires_at IS NULL OR expires_at > now())';
export const MS = `* interval '1 millisecond'`;
const FENCE = 'id = $1 AND key = $2 AND owner = $3 AND fence = $4 AND origin IS NULL';
/** `$n` of the record values (tool, run id, attempt, fingerprint, origin, result, undefined, recorded at, retention, unserializable) after `base`. */
const v = (base: number, n: number): string => `$${base + n}`;
const recordSet = (b: number): string =>
  `tool_name = ${v(b, 1)}, run_id = ${v(b, 2)}, attempt = ${v(b, 3)}, fingerprint = ${v(b, 4)}, origin = ${v(b, 5)},
  result = ${v(b, 6)}, result_undefined = ${v(b, 7)}, recorded_at = COALESCE(${v(b, 8)}::timestamptz, now()),
  expires_at = now() + ${v(b, 9)}::float8 ${MS}, unserializable = ${v(b, 10)}`;

/**
 * What a claim does to an existing row: takes it when it is free (no owner, this owner, or a lease
 * that ended) or holds an expired record; else leaves it (the claim returns no row).
 */
export const CLAIM_CONFLICT = `ON CONFLICT (id) DO UPDATE SET
        owner = excluded.owner, previous_owner = e.owner, fence = e.fence + 1, lease_until = excluded.lease_until,
        tool_name = excluded.tool_name, run_id = excluded.run_id, attempt = excluded.attempt,
        fingerprint = excluded.fingerprint, origin = NULL, result = NULL, result_undefined = false,
        recorded_at = NULL, expires_at = NULL, unserializable = NULL
      WHERE e.key = excluded.key AND (
        (e.origin IS NULL AND (e.owner IS NULL OR e.owner = excluded.owner OR e.lease_until <= now()))
        OR (e.origin IS NOT NULL AND e.expires_at <= now()))`;

/**
 * The statements of the store. A record write takes, after the key ($1 id, $2 full key) and for
 * `complete` the token ($3 owner, $4 fence): tool, run id, attempt, fingerprint, origin, result
 * JSON text, result undefined, recorded at (null for the database's now()), retention in ms, why the
 * result is unserializable (or null). Every write is one statement whose
 * condition carries the whole decision, on the database's clock (`now()`), under READ COMMITTED:
 * a conflicting concurrent write makes it wait and re-check the condition on the newest row.
 */
export function pgStatements(table: string): PgStatements {
  const t = table;
  return {
    get: `SELECT ${RECORD} FROM ${t} WHERE id = $1 AND ${LIVE_RECORD}`,
    put: `
      INSERT INTO ${t} AS e (id, key, owner, fence, tool_name, run_id, attempt, fingerprint, origin, result,
                             result_undefined, recorded_at, expires_at, unserializable)
      VALUES ($1, $2, NULL, 0, $3, $4, $5, $6, $7, $8, $9, COALESCE($10::timestamptz, now()),
              now() + $11::float8 ${MS}, $12)
      ON CONFLICT (id) DO UPDATE SET
        owner = NULL, lease_until = NULL, tool_name = excluded.tool_name, run_id = excluded.run_id,
        attempt = excluded.attempt, fingerprint = excluded.fingerprint, origin = excluded.origin,
        result = excluded.result, result_undefined = excluded.result_undefined,
        recorded_at = excluded.recorded_at, expires_at = excluded.expires_at,
        unserializable = excluded.unserializable
      WHERE e.key = excluded.key AND (e.origin IS NULL OR e.expires_at <= now())
      RETURNING ${RECORD}`,
    claim: `
      INSERT INTO ${t} AS e (id, key, owner, fence, lease_until, tool_name, run_id, attempt, fingerprint)
      VALUES ($1, $2, $3, 1, now() + $4::float8 ${MS}, $5, $6, $7, $8)
      ${CLAIM_CONFLICT}
      RETURNING fence::text AS fence, previous_owner`,
    holder: `
      SELECT key, owner, origin IS NOT NULL AS finished,
             COALESCE(EXTRACT(EPOCH FROM (lease_until - now())) * 1000, 0)::float8 AS remaining
      FROM ${t} WHERE id = $1`,
    complete: `UPDATE ${t} SET owner = NULL, lease_until = NULL, ${recordSet(4)} WHERE ${FENCE} RETURNING ${RECORD}`,
    // A released claim keeps the time it ended in lease_until: prune measures its age from there.
    release: `UPDATE ${t} SET owner = NULL, lease_until = now() WHERE ${FENCE} RETURNING 1 AS ok`,
    renew: `UPDATE ${t} SET lease_until = now() + $5::float8 ${MS} WHERE ${FENCE} RETURNING 1 AS ok`,
    // SKIP LOCKED: rows another statement is rewriting (a put reusing an expired key) are left alone;
    // the outer condition re-checks the row the DELETE actually sees.
    prune: `
      DELETE FROM ${t} WHERE id IN (
        SELECT id FROM ${t} WHERE origin IS NOT NULL AND expires_at <= now()
        ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      AND origin IS NOT NULL AND expires_at <= now()`,
    // Claims that never finished, whose lease ended (expired or released) more than $2 ms ago.
    pruneClaims: `
      DELETE FROM ${t} WHERE id IN (
        SELECT id FROM ${t} WHERE origin IS NULL AND lease_until <= now() - $2::float8 ${MS}
        ORDER BY lease_until LIMIT $1 FOR UPDATE SKIP LOCKED)
      AND origin IS NULL AND lease_until <= now() - $2::float8 ${MS}`,
    // Plain keys come from a range scan of the primary key (C collation); hashed keys are few and
    // checked by their full key.
    list: `
      SELECT ${RECORD} FROM ${t}
      WHERE ((id >= $1 AND id < $2) OR (id >= $3 AND id < $4)) AND starts_with(key, $1) AND ${LIVE_RECORD}`,
  };
}

/** The record of a finished row. */
export function toRecord(row: PgRecordRow): EffectRecord {
  return fromRow({
    key: row.key,
    toolName: row.tool_name,
    origin: row.origin,
    result: row.result,
    resultUndefined: row.result_undefined,
    recordedAt: row.recorded_at.toISOString(),
    expiresAt: row.expires_at === null ? null : row.expires_at.toISOString(),
    runId: row.run_id,
    attempt: row.attempt,
    fingerprint: row.fingerprint,
    unserializable: row.unserializable,
  });
}
