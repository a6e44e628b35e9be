import { createHash } from 'node:crypto';
import { EffectStoreError, MissingPeerDependencyError } from '../errors/errors.js';
import { ensurePgSchema } from './postgres-schema.js';
import { isPgPool, type PgPool, type PgPoolConfig, type PgQueryResult } from './postgres-types.js';
import { checkPostgresUrl } from './postgres-url.js';
import { msOption, TIMEOUT_RANGE } from './store-options.js';

/** Connect timeout of pools the store creates, in ms: an unreachable server fails the call fast. Default 3000. */
export const DEFAULT_PG_CONNECT_TIMEOUT_MS = 3000;

/**
 * Default server-side `statement_timeout` of pools the store creates, in ms: 5000. Every statement
 * of the store touches one row (or a bounded batch), so one that runs this long is stuck behind a
 * lock or an overloaded server; PostgreSQL cancels it and the call fails with `EffectStoreError`.
 */
export const DEFAULT_PG_STATEMENT_TIMEOUT_MS = 5000;

/**
 * Default client-side timeout of every statement the store sends, in ms: 10 000 (`pg`'s
 * `query_timeout`). It bounds what the server cannot: a connection whose bytes are black-holed (a
 * dead peer, a stalled proxy, a partition) fails the call with `EffectStoreError` instead of
 * hanging it, and the connection is dropped. Longer than the statement timeout, so a live server
 * reports its own cancel first.
 */
export const DEFAULT_PG_QUERY_TIMEOUT_MS = 10_000;

/** Where a {@link PgConnection} gets its pool, and how long its statements may take. @public */
export interface PgPoolSource {
  /**
   * A `pg.Pool` to share (never ended by the store; its own `statement_timeout` stays as it is),
   * or options for a pool the store creates and owns.
   */
  readonly pool?: PgPool | PgPoolConfig;
  /** Connection URL, when no pool is given. Checked when the store is created (see `parseStoreSpec`). */
  readonly connectionString?: string;
  /**
   * Server-side `statement_timeout` of the pool the store creates, in ms (1 to 2^31 - 1). Default
   * {@link DEFAULT_PG_STATEMENT_TIMEOUT_MS}, or the pool option `statement_timeout` when given. Not
   * applied to a pool handed in.
   */
  readonly statementTimeoutMs?: number;
  /**
   * Client-side timeout of every statement the store sends, in ms (1 to 2^31 - 1), handed-in pools
   * included. Default {@link DEFAULT_PG_QUERY_TIMEOUT_MS}, or the pool option `query_timeout`.
   */
  readonly queryTimeoutMs?: number;
}

/** The one part of the `pg` module the store needs. */
interface PgModule {
  readonly Pool: new (config: PgPoolConfig) => PgPool & { on(event: 'error', listener: () => void): unknown };
}

let pgModule: Promise<PgModule> | undefined;

/**
 * Loads `pg` on first use (it is an optional peer: only PostgreSQL users install it), once per
 * process.
 *
 * @throws MissingPeerDependencyError naming `npm install pg` when it is not installed.
 */
function loadPg(): Promise<PgModule> {
  pgModule ??= import('pg').then(
    // pg is CommonJS: its exports arrive as the default export. Typed structurally, not with @types/pg.
    (loaded) => loaded.default as unknown as PgModule,
    (error: unknown) => {
      pgModule = undefined; // installed meanwhile? the next call tries again
      const code = (error as { code?: unknown }).code;
      if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
        throw new MissingPeerDependencyError({
          packageName: 'pg',
          feature: 'The PostgreSQL effect store',
          cause: error,
        });
      }
      throw error;
    },
  );
  return pgModule;
}

/**
 * The pool of a PostgreSQL effect store: loads `pg` and creates the pool on first use, creates the
 * schema, runs statements as named prepared statements (parsed once per connection) under a
 * client-side timeout, and turns an unreachable or stalled server into an {@link EffectStoreError}
 * naming host and port.
 */
export class PgConnection {
  private pool: PgPool | undefined;
  private opening: Promise<PgPool> | undefined;
  private readonly shared: PgPool | undefined;
  private readonly config: PgPoolConfig;
  private readonly queryTimeoutMs: number;
  private readonly names = new Map<string, string>();
  private ready: Promise<void> | undefined;
  private isReady = false;

  /** @throws InvalidEffectStoreSpecError for a malformed connection URL or timeout option. */
  constructor(
    source: PgPoolSource,
    private readonly schema: string,
    private readonly table: string,
  ) {
    const given = isPgPool(source.pool) ? undefined : source.pool;
    const statementTimeoutMs = msOption(
      'PostgresEffectStore',
      'statementTimeoutMs',
      source.statementTimeoutMs ?? given?.statement_timeout,
      DEFAULT_PG_STATEMENT_TIMEOUT_MS,
      TIMEOUT_RANGE,
    );
    this.queryTimeoutMs = msOption(
      'PostgresEffectStore',
      'queryTimeoutMs',
      source.queryTimeoutMs ?? given?.query_timeout,
      DEFAULT_PG_QUERY_TIMEOUT_MS,
      TIMEOUT_RANGE,
    );
    const connectionString = source.connectionString ?? given?.connectionString;
    if (connectionString !== undefined) checkPostgresUrl(connectionString);
    this.config = {
      connectionTimeoutMillis: DEFAULT_PG_CONNECT_TIMEOUT_MS,
      ...given,
      statement_timeout: statementTimeoutMs,
      query_timeout: this.queryTimeoutMs,
      ...(connectionString === undefined ? {} : { connectionString }),
    };
    this.shared = isPgPool(source.pool) ? source.pool : undefined;
    this.pool = this.shared;
  }

  /** Runs `text` with `values` (pool and schema created first on first use). */
  async exec(text: string, values: unknown[]): Promise<PgQueryResult> {
    try {
      const pool = this.pool ?? (await this.openPool());
      if (!this.isReady) {
        this.ready ??= this.createSchema(pool);
        await this.ready;
        this.isReady = true; // later calls skip the extra await on the hot path
      }
      return await pool.query({ name: this.nameOf(text), text, values, query_timeout: this.queryTimeoutMs });
    } catch (error) {
      throw this.describeFailure(error);
    }
  }

  /** Ends the pool if this connection created it; a pool handed in is left to its owner. */
  async close(): Promise<void> {
    if (this.shared !== undefined) return;
    const pool = this.pool ?? (await this.opening?.catch(() => undefined));
    if (pool !== undefined && pool.ended !== true && pool.ending !== true) await pool.end();
  }

  private openPool(): Promise<PgPool> {
    this.opening ??= loadPg().then(
      (pg) => {
        const pool = new pg.Pool(this.config);
        // An idle connection dropped by the server must not crash the process; the next query reconnects.
        pool.on('error', () => undefined);
        this.pool = pool;
        return pool;
      },
      (error: unknown) => {
        this.opening = undefined;
        throw error;
      },
    );
    return this.opening;
  }

  // Named after a hash of the text: the same statement gets the same name on every store
  // instance sharing a pool, and different statements never share a name.
  private nameOf(text: string): string {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `chamvi_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      this.names.set(text, name);
    }
    return name;
  }

  private async createSchema(pool: PgPool): Promise<void> {
    try {
      const client = await pool.connect();
      let failure: Error | undefined;
      try {
        await ensurePgSchema(client, this.schema, this.table, this.queryTimeoutMs);
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        throw error;
      } finally {
        // A connection that failed mid-transaction (a timeout, say) is destroyed, never reused.
        client.release(failure);
      }
    } catch (error) {
      this.ready = undefined; // the next call tries again (the server may be back)
      throw error;
    }
  }

  private where(): string {
    const o = this.shared?.options ?? this.config;
    let url: URL | undefined;
    try {
      url = o.connectionString === undefined ? undefined : new URL(o.connectionString);
    } catch {
      url = undefined;
    }
    const host = url?.hostname || o.host || process.env['PGHOST'] || 'localhost';
    const port = url?.port || o.port || process.env['PGPORT'] || 5432;
    return `${host}:${port}`;
  }

  private describeFailure(error: unknown): unknown {
    const reason = String((error as { message?: unknown }).message ?? error);
    if (isTimeout(error)) {
      return new EffectStoreError(
        `The PostgreSQL effect store at ${this.where()} did not answer a statement within ${this.queryTimeoutMs} ms (queryTimeoutMs; ${reason}): the connection stalled or the server is overloaded. The connection was dropped; the call can be retried.`,
        { cause: error },
      );
    }
    if (isStatementCancel(error)) {
      return new EffectStoreError(
        `The PostgreSQL effect store at ${this.where()} cancelled a statement (${reason}): it ran past statement_timeout (statementTimeoutMs), stuck behind a lock or an overloaded server. The call can be retried.`,
        { cause: error },
      );
    }
    if (!isConnectionFailure(error)) return error;
    return new EffectStoreError(
      `Could not reach the PostgreSQL effect store at ${this.where()} (${reason}). Check that the server is up and reachable; the call can be retried.`,
      { cause: error },
    );
  }
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

// Duck-typed rather than `instanceof Error`: socket errors may come from another realm (jest, vm).
function isConnectionFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, errors, message } = error as { code?: unknown; errors?: unknown; message?: unknown };
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  if (Array.isArray(errors) && errors.some(isConnectionFailure)) return true;
  return (
    typeof message === 'string' &&
    /timeout exceeded when trying to connect|Connection terminated|connection timeout/i.test(message)
  );
}

// pg's client-side query_timeout rejects with exactly this message.
function isTimeout(error: unknown): boolean {
  return (error as { message?: unknown } | null)?.message === 'Query read timeout';
}

// 57014 query_canceled: statement_timeout (or a cancel request) ended the statement.
function isStatementCancel(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '57014';
}
