// `@chamvi/temporal/stores`: the effect stores (memory, SQLite, PostgreSQL), a store from a spec
// (`createEffectStore('postgres://…')`), the interfaces a custom store implements, and inspection of
// a run's records. Loading it loads no database driver: `node:sqlite` is opened with the first
// file, `pg` (an optional peer) with the first PostgreSQL store.
export { createEffectStore, type CreateEffectStoreOptions, type ManagedEffectStore } from './create-effect-store.js';
export { MemoryEffectStore, type MemoryEffectStoreOptions } from './memory-effect-store.js';
export { SqliteEffectStore, type SqliteEffectStoreOptions } from './sqlite-effect-store.js';
export { PostgresEffectStore, type PostgresEffectStoreOptions } from './postgres-effect-store.js';
export type { PgPoolSource } from './postgres-connection.js';
export type { PgPool, PgPoolClient, PgPoolConfig, PgQueryConfig, PgQueryResult } from './postgres-types.js';
export type { RetentionOptions } from './retention.js';
export type {
  ClaimRequest,
  ClaimResult,
  ClaimToken,
  EffectClaims,
  EffectOrigin,
  EffectRecord,
  EffectRecordInput,
  FencedResult,
  IEffectStore,
} from './effect-store.js';
export type { AppendConversationOptions, ConversationStore } from './conversation-store.js';
export type { ConversationWriteOrder } from './conversation-write-order.js';
export type { ConversationEntry } from '../conversation/conversation-entry.js';
export { inspectEffects, type EffectInspectionRow, type ListableEffectStore } from './inspect-effects.js';
