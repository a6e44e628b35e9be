import type { EffectClaims, EffectRecord, IEffectStore } from './effect-store.js';
import type { ConversationStore } from './conversation-store.js';
import { MemoryEffectStore } from './memory-effect-store.js';
import { PostgresEffectStore } from './postgres-effect-store.js';
import type { PgPoolConfig } from './postgres-types.js';
import type { RetentionOptions } from './retention.js';
import { SqliteEffectStore } from './sqlite-effect-store.js';
import { parseStoreSpec } from './store-spec.js';

/**
 * An effect store this library ships: claims, run conversations and offloaded payloads, plus
 * inspection, pruning and closing. {@link MemoryEffectStore}, {@link SqliteEffectStore} and
 * {@link PostgresEffectStore} are all one.
 * @public
 */
export interface ManagedEffectStore extends IEffectStore, EffectClaims, ConversationStore {
  /** Like {@link IEffectStore.put}, always returning the stored winner. */
  put(key: string, record: Parameters<IEffectStore['put']>[1]): Promise<EffectRecord>;
  /** Finished, unexpired records whose key starts with `prefix`, in key order. */
  list(prefix: string): Promise<EffectRecord[]>;
  /**
   * Deletes up to `limit` rows the store no longer needs (default 1000; a whole number, or
   * `Infinity`); returns how many it deleted:
   * - finished records past their expiry (`expiresAt`: the retention after they were written);
   * - abandoned claims: keys an attempt claimed but never recorded (it threw, crashed, or was
   *   released), once their lease ended more than `retentionMs` ago.
   *
   * A claim is never deleted while its lease is live, nor soon after it ended: the attempt holding
   * it may still be finishing (a slow remote call, a paused process), and within the retry horizon
   * the row must stay, so that every takeover still raises the fence and a late `complete`,
   * `renew` or `release` with an old token is refused against it. One retention after the lease
   * ended is the same horizon finished records get: past it, a retry would find no record either
   * way, and `alreadyApplied` is what guards it.
   */
  prune(limit?: number): Promise<number>;
  /** Releases connections and files. */
  close(): Promise<void>;
}

/** Options of {@link createEffectStore}, passed on to the store it creates. @public */
export interface CreateEffectStoreOptions extends RetentionOptions {
  /** SQLite and PostgreSQL: table name. Default `chamvi_effects`. */
  readonly table?: string;
  /** PostgreSQL: schema name. Default `public`. */
  readonly schema?: string;
  /** PostgreSQL: further `pg` pool options (size, timeouts); the URL still names the server. */
  readonly pool?: Omit<PgPoolConfig, 'connectionString'>;
  /** PostgreSQL: server-side statement timeout, in ms. Default `DEFAULT_PG_STATEMENT_TIMEOUT_MS` (5000). */
  readonly statementTimeoutMs?: number;
  /** PostgreSQL: client-side timeout of every statement, in ms. Default `DEFAULT_PG_QUERY_TIMEOUT_MS` (10 000). */
  readonly queryTimeoutMs?: number;
}

/**
 * Creates an effect store from a spec string:
 * - `memory:` — {@link MemoryEffectStore} (tests, single process; lost on exit);
 * - a file path (`./effects.db`) or an `sqlite:` URL (`sqlite:effects.db`, `sqlite:///abs/effects.db`,
 *   `sqlite::memory:`) — {@link SqliteEffectStore}, the embedded default;
 * - `postgres://…` / `postgresql://…` — {@link PostgresEffectStore}, shared by workers on several machines.
 *
 * Nothing is opened until the first call; the schema is created or checked then (and `pg`, an
 * optional peer, is loaded only when a PostgreSQL store first runs a statement).
 *
 * @throws InvalidEffectStoreSpecError naming the problem and the accepted forms.
 * @public
 */
export function createEffectStore(spec: string, options: CreateEffectStoreOptions = {}): ManagedEffectStore {
  const parsed = parseStoreSpec(spec);
  const retention = options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs };
  switch (parsed.kind) {
    case 'memory':
      return new MemoryEffectStore(retention);
    case 'sqlite':
      return new SqliteEffectStore({
        path: parsed.path,
        ...retention,
        ...(options.table === undefined ? {} : { table: options.table }),
      });
    case 'postgres':
      return new PostgresEffectStore({
        pool: { ...options.pool, connectionString: parsed.url },
        ...retention,
        ...(options.table === undefined ? {} : { table: options.table }),
        ...(options.schema === undefined ? {} : { schema: options.schema }),
        ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
        ...(options.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.queryTimeoutMs }),
      });
  }
}
