/**
 * Default retention of finished records: 30 days. A record must outlive every retry of the run it
 * belongs to (Temporal workflow retries and resets included), or a late retry would apply the
 * effect again; raise it for workflows that run or may be reset later than that.
 */
export const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Retention setting shared by every store. @public */
export interface RetentionOptions {
  /**
   * How long finished records are kept, in ms: a whole number from 1 to `MAX_RETENTION_MS`
   * (100 years); anything else (`NaN`, `Infinity`, a fraction, 0 or less) is refused when the store
   * is created, with `InvalidEffectStoreSpecError`. Default {@link DEFAULT_RETENTION_MS}.
   *
   * A retention shorter than the claim lease is accepted on purpose: the two measure different
   * things (how long a finished record is remembered; how long an attempt may work before another
   * may take its key over), and the store only sees a lease per claim. What matters is that the
   * retention outlives every retry of the run; a shorter one lets a late retry apply the effect
   * again unless `alreadyApplied` finds it. Abandoned claims are pruned after their lease expired
   * plus this retention (see `prune`).
   */
  readonly retentionMs?: number;
}
