import { CLAIM_CONFLICT, MS, RECORD } from './postgres-statements.js';

/** The batched forms of a PostgreSQL effect store's hot statements: many items, one statement, one commit. */
export interface PgBatchStatements {
  /**
   * Claims (arrays: id, key, owner, lease ms, tool, run id, attempt, fingerprint), each decided as
   * the single claim decides it; returns `b_id, fence, previous_owner` of each claim taken, none
   * for a refused one. Rows are locked in id order, so two workers' batches wait for each other
   * rather than deadlock.
   */
  readonly claims: string;
  /**
   * Completions (arrays: id, key, owner, fence, then the record values of `complete`); returns
   * `b_id, b_owner, b_fence` and the record of each completion whose claim still held.
   */
  readonly completes: string;
}

export function pgBatchStatements(table: string): PgBatchStatements {
  const t = table;
  return {
    claims: `
      INSERT INTO ${t} AS e (id, key, owner, fence, lease_until, tool_name, run_id, attempt, fingerprint)
      SELECT b_id, b_key, b_owner, 1, now() + b_lease ${MS}, b_tool, b_run, b_attempt, b_fp
      FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::text[], $6::text[], $7::int[], $8::text[])
        AS b(b_id, b_key, b_owner, b_lease, b_tool, b_run, b_attempt, b_fp)
      ORDER BY b_id
      ${CLAIM_CONFLICT}
      RETURNING id AS b_id, fence::text AS fence, previous_owner`,
    completes: `
      UPDATE ${t} AS e SET owner = NULL, lease_until = NULL, tool_name = b_tool, run_id = b_run,
        attempt = b_attempt, fingerprint = b_fp, origin = b_origin, result = b_result, result_undefined = b_ru,
        recorded_at = COALESCE(b_recorded_at, now()), expires_at = now() + b_retention ${MS},
        unserializable = b_unser
      FROM (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::int[],
                             $8::text[], $9::text[], $10::text[], $11::bool[], $12::timestamptz[], $13::float8[],
                             $14::text[])
          AS u(b_id, b_key, b_owner, b_fence, b_tool, b_run, b_attempt, b_fp, b_origin, b_result, b_ru,
               b_recorded_at, b_retention, b_unser)
        ORDER BY b_id
      ) AS b
      WHERE e.id = b_id AND e.key = b_key AND e.owner = b_owner AND e.fence = b_fence AND e.origin IS NULL
      RETURNING b_id, b_owner, b_fence::text AS b_fence, ${RECORD.split(', ')
        .map((c) => `e.${c}`)
        .join(', ')}`,
  };
}
