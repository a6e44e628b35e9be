import type { EffectRecord, EffectRecordInput } from './effect-store.js';

/**
 * Default retention of finished records: 30 days. A record must outlive every retry of the run it
 * belongs to (Temporal workflow retries and resets included), or a late retry would apply the
 * effect again; raise it for workflows that run or may be reset later than that.
 */
export const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Retention setting shared by every store. */
export interface RetentionOptions {
  /** How long finished records are kept, in ms. Default {@link DEFAULT_RETENTION_MS}. */
  readonly retentionMs?: number;
}

/** The record as a store keeps it: times filled in, fields in a fixed order, `undefined` fields dropped. */
export function toStoredRecord(
  key: string,
  input: EffectRecordInput,
  nowMs: number,
  retentionMs: number,
): EffectRecord {
  const record: Record<string, unknown> = {
    key,
    toolName: input.toolName,
    origin: input.origin,
    recordedAt: input.recordedAt ?? new Date(nowMs).toISOString(),
    expiresAt: new Date(nowMs + retentionMs).toISOString(),
  };
  if (input.result === undefined) record['resultUndefined'] = true;
  else record['result'] = input.result;
  if (input.runId !== undefined) record['runId'] = input.runId;
  if (input.attempt !== undefined) record['attempt'] = input.attempt;
  if (input.fingerprint !== undefined) record['fingerprint'] = input.fingerprint;
  return record as unknown as EffectRecord;
}
