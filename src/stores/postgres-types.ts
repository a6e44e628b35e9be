// The few shapes of `pg` the PostgreSQL store uses, declared here so that `pg` stays an optional
// peer: nothing in this library's public declarations needs `pg` or `@types/pg`, and a `pg.Pool`
// of any 8.x version fits these shapes.

/** One statement as the store sends it: named (prepared once per connection), with its own read timeout. @public */
export interface PgQueryConfig {
  readonly name?: string;
  readonly text: string;
  readonly values?: unknown[];
  /** Client-side timeout of this statement, in ms (`pg`'s per-query `query_timeout`). */
  readonly query_timeout?: number;
}

/** What the store reads of a query result. @public */
export interface PgQueryResult {
  readonly rows: unknown[];
  readonly rowCount: number | null;
}

/** A connection checked out of a pool. `release(error)` destroys it instead of returning it. @public */
export interface PgPoolClient {
  query(config: PgQueryConfig): Promise<PgQueryResult>;
  release(error?: Error | boolean): void;
}

/** A `pg.Pool`, or anything shaped like it, that a store may share (and never ends). @public */
export interface PgPool {
  query(config: PgQueryConfig): Promise<PgQueryResult>;
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  readonly ending?: boolean;
  readonly ended?: boolean;
  /** The pool's options, read to name host and port in errors. */
  readonly options?: { readonly connectionString?: string; readonly host?: string; readonly port?: number };
}

/**
 * Options of a `pg` pool the store creates (`pg.PoolConfig`): the common ones are named here,
 * every other `pg` option passes through as is.
 * @public
 */
export interface PgPoolConfig {
  readonly connectionString?: string;
  readonly host?: string;
  readonly port?: number;
  readonly user?: string;
  readonly password?: string | (() => string | Promise<string>);
  readonly database?: string;
  /** Most connections the pool opens. `pg`'s default is 10. */
  readonly max?: number;
  /** How long to wait for a connection, in ms. The store's default is `DEFAULT_PG_CONNECT_TIMEOUT_MS`. */
  readonly connectionTimeoutMillis?: number;
  readonly idleTimeoutMillis?: number;
  readonly ssl?: boolean | Readonly<Record<string, unknown>>;
  /** Server-side statement timeout, in ms; the store's `statementTimeoutMs` wins when given. */
  readonly statement_timeout?: number;
  /** Client-side read timeout, in ms; the store's `queryTimeoutMs` wins when given. */
  readonly query_timeout?: number;
  readonly application_name?: string;
  readonly keepAlive?: boolean;
  readonly [option: string]: unknown;
}

/** Whether `value` is a pool to share rather than options for a new one. */
export function isPgPool(value: unknown): value is PgPool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as PgPool).connect === 'function' &&
    typeof (value as PgPool).query === 'function'
  );
}
