// `@chamvi/temporal/stores`: effect stores by spec (`createEffectStore('postgres://…')`), the spec
// parser, inspection of a run's records, and the limits every store enforces. Loading it loads no
// database driver: SQLite is opened with the first file, `pg` with the first PostgreSQL store.
// The store classes have entry points of their own: `@chamvi/temporal/stores/sqlite`,
// `@chamvi/temporal/stores/postgres` (and `MemoryEffectStore` at the root).
export { createEffectStore, type CreateEffectStoreOptions, type ManagedEffectStore } from './create-effect-store.js';
export { parseStoreSpec, ACCEPTED_STORE_SPECS, type StoreSpec } from './store-spec.js';
export { inspectEffects, type EffectInspectionRow, type ListableEffectStore } from './inspect-effects.js';
export { storageKey, MAX_PLAIN_KEY_BYTES, HASHED_KEY_PREFIX } from './storage-key.js';
export { MAX_LEASE_MS, MAX_RETENTION_MS, MAX_TIMEOUT_MS } from './store-options.js';
export { DEFAULT_RETENTION_MS, type RetentionOptions } from './retention.js';
export {
  EffectKeyNotStorableError,
  EffectStoreError,
  EffectStoreOpenError,
  EffectStoreSchemaError,
  InvalidClaimRequestError,
  InvalidEffectStoreSpecError,
  MissingPeerDependencyError,
} from '../errors/errors.js';
