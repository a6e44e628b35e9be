import { createHash } from 'node:crypto';
import pg from 'pg';
import { EffectStoreError } from '../errors/errors.js';
import { ensurePgSchema } from './postgres-schema.js';
import { checkPostgresUrl } from './postgres-url.js';

/** Connect timeout of pools the store creates, in ms: an unreachable server fails the call fast. Default 3000. */
export const DEFAULT_PG_CONNECT_TIMEOUT_MS = 3000;

/** Where a {@link PgConnection} gets its pool. */
export interface PgPoolSource {
  /** An existing pool (never ended by the store), or `pg` pool options (the store owns that pool). */
  readonly pool?: pg.Pool | pg.PoolConfig;
  /** Connection URL, when no pool is given. */
  readonly connectionString?: string;
}

/**
 * The pool of a PostgreSQL effect store: creates the schema on first use, runs statements as
 * named prepared statements (parsed once per connection), and turns an unreachable server into
 * an {@link EffectStoreError} naming host and port.
 */
export class PgConnection {
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly names = new Map<string, string>();
  private ready: Promise<void> | undefined;
  private isReady = false;

  constructor(
    source: PgPoolSource,
    private readonly schema: string,
    private readonly table: string,
  ) {
    if (source.pool instanceof pg.Pool) {
      this.pool = source.pool;
      this.ownsPool = false;
    } else {
      const config: pg.PoolConfig = { connectionTimeoutMillis: DEFAULT_PG_CONNECT_TIMEOUT_MS, ...source.pool };
      if (source.connectionString !== undefined) config.connectionString = source.connectionString;
      if (config.connectionString !== undefined) checkPostgresUrl(config.connectionString);
      this.pool = new pg.Pool(config);
      this.ownsPool = true;
      // An idle connection dropped by the server must not crash the process; the next query reconnects.
      this.pool.on('error', () => undefined);
    }
  }

  /** Runs `text` with `values` (schema created first on first use). */
  async exec(text: string, values: unknown[]): Promise<pg.QueryResult> {
    try {
      if (!this.isReady) {
        this.ready ??= this.createSchema();
        await this.ready;
        this.isReady = true; // later calls skip the extra await on the hot path
      }
      return await this.pool.query({ name: this.nameOf(text), text, values });
    } catch (error) {
      throw this.describeFailure(error);
    }
  }

  /** Ends the pool if this connection created it; a pool handed in is left to its owner. */
  async close(): Promise<void> {
    if (this.ownsPool && !this.pool.ended && !this.pool.ending) await this.pool.end();
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

  private async createSchema(): Promise<void> {
    try {
      const client = await this.pool.connect();
      try {
        await ensurePgSchema(client, this.schema, this.table);
      } finally {
        client.release();
      }
    } catch (error) {
      this.ready = undefined; // the next call tries again (the server may be back)
      throw error;
    }
  }

  private describeFailure(error: unknown): unknown {
    if (!isConnectionFailure(error)) return error;
    const o = this.pool.options as pg.PoolConfig;
    const url = o.connectionString === undefined ? undefined : new URL(o.connectionString);
    const host = url?.hostname || o.host || process.env['PGHOST'] || 'localhost';
    const port = url?.port || o.port || process.env['PGPORT'] || 5432;
    const reason = String((error as { message?: unknown }).message ?? error);
    return new EffectStoreError(
      `Could not reach the PostgreSQL effect store at ${host}:${port} (${reason}). Check that the server is up and reachable; the call can be retried.`,
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
