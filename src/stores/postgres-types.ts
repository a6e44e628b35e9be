// The few shapes of `pg` the PostgreSQL store uses, declared here so that `pg` stays an optional
// peer: nothing in this library's public declarations needs `pg` or `@types/pg`, and a `pg.Pool`
// of any 8.x version fits these shapes.

/** One statement as the store sends it: named (prepared once per connection), with its own read timeout. @public */
export interface PgQueryConfig {
  /** The prepared statement's name (prepared once per connection). */
  readonly name?: string;
  /** The SQL. */
  readonly text: string;
  /** The parameters (`$1`, `$2`, ...). */
  readonly values?: unknown[];
  /** Client-side timeout of this statement, in ms (`pg`'s per-query `query_timeout`). */
  readonly query_timeout?: number;
}

/** What the store reads of a query result. @public */
export interface PgQueryResult {
  /** The rows returned. */
  readonly rows: unknown[];
  /** How many rows the statement touched (`null` when the server does not say). */
  readonly rowCount: number | null;
}

/** A connection checked out of a pool. `release(error)` destroys it instead of returning it. @public */
export interface PgPoolClient {
  /** Runs one statement on this connection. */
  query(config: PgQueryConfig): Promise<PgQueryResult>;
  /** Returns the connection to the pool; with an error (or `true`), destroys it. */
  release(error?: Error | boolean): void;
}

/** A `pg.Pool`, or anything shaped like it, that a store may share (and never ends). @public */
export interface PgPool {
  /** Runs one statement on a connection of the pool. */
  query(config: PgQueryConfig): Promise<PgQueryResult>;
  /** Checks a connection out of the pool (the store's transactions and `LISTEN` use one). */
  connect(): Promise<PgPoolClient>;
  /** Closes the pool's connections (the store never calls it on a pool it was given). */
  end(): Promise<void>;
  /** `true` once `end()` was called (`pg.Pool` sets it). */
  readonly ending?: boolean;
  /** `true` once the pool has closed (`pg.Pool` sets it). */
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
  /** A `postgres://` URL. */
  readonly connectionString?: string;
  /** The server's host. */
  readonly host?: string;
  /** The server's port. */
  readonly port?: number;
  /** The user to connect as. */
  readonly user?: string;
  /** The password, or a function that gives it (for rotating credentials). */
  readonly password?: string | (() => string | Promise<string>);
  /** The database. */
  readonly database?: string;
  /** Most connections the pool opens. `pg`'s default is 10. */
  readonly max?: number;
  /** How long to wait for a connection, in ms. The store's default is `DEFAULT_PG_CONNECT_TIMEOUT_MS`. */
  readonly connectionTimeoutMillis?: number;
  /** How long an idle connection stays open, in ms (`pg`'s option). */
  readonly idleTimeoutMillis?: number;
  /** TLS: `true`, or `pg`'s TLS options. */
  readonly ssl?: boolean | Readonly<Record<string, unknown>>;
  /** Server-side statement timeout, in ms; the store's `statementTimeoutMs` wins when given. */
  readonly statement_timeout?: number;
  /** Client-side read timeout, in ms; the store's `queryTimeoutMs` wins when given. */
  readonly query_timeout?: number;
  /** The `application_name` the server shows for the connections. */
  readonly application_name?: string;
  /** TCP keep-alive on the connections (`pg`'s option). */
  readonly keepAlive?: boolean;
  /** Any other `pg.Pool` option, handed on as it is. */
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
