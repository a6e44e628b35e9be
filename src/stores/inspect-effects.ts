import type { EffectOrigin, EffectRecord } from './effect-store.js';

/** A store whose records can be listed by key prefix (every store this library ships). @public */
export interface ListableEffectStore {
  /** Finished, unexpired records whose key starts with `prefix`, in key order. */
  list(prefix: string): Promise<readonly EffectRecord[]>;
}

/** One recorded effect as `inspectEffects` (and the CLI) shows it. @public */
export interface EffectInspectionRow {
  /** The effect key. */
  readonly key: string;
  /** Name of the tool that recorded it. */
  readonly tool: string;
  /** Whether `execute` applied it or `alreadyApplied` found it. */
  readonly origin: EffectOrigin;
  /** The attempt that wrote the record (Temporal's activity attempt), when known. */
  readonly attempt: number | undefined;
  /** When the record was written, ISO 8601. */
  readonly recordedAt: string;
  /** When the store may forget it, ISO 8601; `undefined` means never. */
  readonly expiresAt: string | undefined;
}

/**
 * The recorded effects of a run: every finished, unexpired record whose key starts with
 * `runIdOrPrefix`, in key order. Effect keys start with the run id (`<runId>:<tool>:…`), so a run
 * id lists that run; pass `"<runId>:"` to exclude runs whose id merely starts with it, or a
 * longer prefix (`"<runId>:comment:"`) to narrow it down. Open claims are not listed.
 *
 * @throws TypeError when the store cannot list records (a custom `IEffectStore` without `list`).
 * @public
 */
export async function inspectEffects(
  store: ListableEffectStore | object,
  runIdOrPrefix: string,
): Promise<EffectInspectionRow[]> {
  if (!isListable(store)) {
    throw new TypeError(
      'inspectEffects needs a store with list(prefix): MemoryEffectStore, SqliteEffectStore, PostgresEffectStore, or a custom store that implements it.',
    );
  }
  if (typeof runIdOrPrefix !== 'string') throw new TypeError('inspectEffects: runIdOrPrefix must be a string.');
  const records = await store.list(runIdOrPrefix);
  return records.map((r) => ({
    key: r.key,
    tool: r.toolName,
    origin: r.origin,
    attempt: r.attempt,
    recordedAt: r.recordedAt,
    expiresAt: r.expiresAt,
  }));
}

function isListable(store: unknown): store is ListableEffectStore {
  return typeof store === 'object' && store !== null && typeof (store as ListableEffectStore).list === 'function';
}
