import type { EffectOrigin, EffectRecord, EffectRecordInput } from './effect-store.js';

/**
 * A finished record as the SQL stores read it back, before it becomes an {@link EffectRecord}.
 * Times are already ISO 8601 strings; `result` is the JSON text of the result (null when
 * `resultUndefined`).
 */
export interface EffectRow {
  readonly key: string;
  readonly toolName: string;
  readonly origin: EffectOrigin;
  readonly result: string | null;
  readonly resultUndefined: boolean;
  readonly recordedAt: string;
  readonly expiresAt: string | null;
  readonly runId: string | null;
  readonly attempt: number | null;
  readonly fingerprint: string | null;
  readonly unserializable: string | null;
}

/** The columns a SQL store writes for a finished record (times are filled in by the database). */
export interface RecordColumns {
  readonly toolName: string;
  readonly origin: EffectOrigin;
  /** JSON text of the result, or null when the result is `undefined`. */
  readonly result: string | null;
  readonly resultUndefined: boolean;
  readonly runId: string | null;
  readonly attempt: number | null;
  readonly fingerprint: string | null;
  /** The caller's `recordedAt`, or null to let the database stamp its own time. */
  readonly recordedAt: string | null;
  /** Why the applied effect's result could not be recorded (then there is no result), or null. */
  readonly unserializable: string | null;
}

/**
 * What a SQL store writes for `input`. The result is kept as JSON text (not a JSON column type),
 * so what comes back is exactly `JSON.parse(JSON.stringify(result))`, `"\u0000"` and key order
 * included. A result JSON cannot express (`undefined`, a function) is recorded as `undefined`, and
 * so is the result of a record marked `unserializable` (its reason goes in a column of its own).
 */
export function toRecordColumns(input: EffectRecordInput): RecordColumns {
  const unserializable = input.unserializable ?? null;
  const text =
    input.result === undefined || unserializable !== null
      ? undefined
      : (JSON.stringify(input.result) as string | undefined);
  return {
    toolName: input.toolName,
    origin: input.origin,
    result: text ?? null,
    resultUndefined: text === undefined,
    runId: input.runId ?? null,
    attempt: input.attempt ?? null,
    fingerprint: input.fingerprint ?? null,
    recordedAt: input.recordedAt ?? null,
    unserializable,
  };
}

/** The {@link EffectRecord} of a row, shaped exactly like `MemoryEffectStore` returns it (absent fields omitted). */
export function fromRow(row: EffectRow): EffectRecord {
  const record: Record<string, unknown> = {
    key: row.key,
    toolName: row.toolName,
    origin: row.origin,
    recordedAt: row.recordedAt,
  };
  if (row.expiresAt !== null) record['expiresAt'] = row.expiresAt;
  if (row.resultUndefined || row.result === null) record['resultUndefined'] = true;
  else record['result'] = JSON.parse(row.result) as unknown;
  if (row.runId !== null) record['runId'] = row.runId;
  if (row.attempt !== null) record['attempt'] = row.attempt;
  if (row.fingerprint !== null) record['fingerprint'] = row.fingerprint;
  if (row.unserializable !== null) record['unserializable'] = row.unserializable;
  return record as unknown as EffectRecord;
}
