// `@chamvi/temporal/stores/postgres`: the production effect store, one table shared by every
// worker of a task queue. `pg` (an optional peer) is loaded when the first store opens.
export { PostgresEffectStore, type PostgresEffectStoreOptions } from './postgres-effect-store.js';
export {
  DEFAULT_PG_CONNECT_TIMEOUT_MS,
  DEFAULT_PG_QUERY_TIMEOUT_MS,
  DEFAULT_PG_STATEMENT_TIMEOUT_MS,
  type PgPoolSource,
} from './postgres-connection.js';
export type { PgPool, PgPoolClient, PgPoolConfig, PgQueryConfig, PgQueryResult } from './postgres-types.js';
