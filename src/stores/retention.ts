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
