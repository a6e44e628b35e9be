import type { PgPoolConfig } from '../stores/postgres-types.js';
import {
  DEFAULT_STREAM_READ_LIMIT,
  DEFAULT_STREAM_RETENTION_MS,
  STREAM_PRUNE_EVERY_MS,
  type RunStreamBatch,
  type RunStreamPart,
  type RunStreamStore,
  type RunStreamWriterRef,
} from './run-stream-store.js';
import { abortableWait } from './wait.js';
import { RunWaiters } from './run-waiters.js';
import { postgresStreamSql } from './postgres-stream-sql.js';
import { loadPg, type PgClientLike, type PgPoolLike } from './postgres-stream-pg.js';

/** What {@link PostgresRunStreamStore} takes. */
export interface PostgresRunStreamOptions {
  /** Table of the stream batches, also the `LISTEN` channel. Default `chamvi_stream`. */
  readonly table?: string;
  /** Options of the `pg` pool and listening connection (besides the URL): `max`, `ssl`, ... */
  readonly pool?: PgPoolConfig;
  /**
   * How long a waiting reader trusts the notifications before it reads anyway, in ms. Default
   * {@link DEFAULT_PG_STREAM_SAFETY_POLL_MS}: readers wake on `NOTIFY`, this only bounds what a
   * notification lost in a way the listening connection did not notice (none is known) could cost.
   */
  readonly safetyPollMs?: number;
  /** How long a batch is kept, in ms. Default {@link DEFAULT_STREAM_RETENTION_MS} (7 days). */
  readonly retentionMs?: number;
}

/** Default safety read of a PostgreSQL stream reader: every 30 s without a notification. */
export const DEFAULT_PG_STREAM_SAFETY_POLL_MS = 30_000;

const QUERY_TIMEOUT_MS = 10_000;

/**
 * A {@link RunStreamStore} in PostgreSQL: one row per batch in its own table; each append sends
 * `pg_notify(<table>, <run id>)` in the same statement, so readers wake when the batch commits.
 * Readers of one store object share one listening connection (`LISTEN <table>`); a lost
 * connection wakes every waiting reader (they read again) and is opened again on the next wait.
 * `pg` is an optional peer, loaded on first use.
 */
export class PostgresRunStreamStore implements RunStreamStore {
  private readonly table: string;
  private readonly sql: ReturnType<typeof postgresStreamSql>;
  private pool: Promise<PgPoolLike> | undefined;
  private listener: Promise<PgClientLike> | undefined;
  private readonly waiters = new RunWaiters();
  private lastPrune = 0;
  private closed = false;

  constructor(
    private readonly connectionString: string,
    private readonly options: PostgresRunStreamOptions = {},
  ) {
    this.table = options.table ?? 'chamvi_stream';
    if (!/^[a-z_][a-z0-9_]*$/.test(this.table)) throw new TypeError(`Invalid stream table name "${this.table}".`);
    this.sql = postgresStreamSql(this.table);
  }

  /** {@inheritDoc RunStreamStore.append} */
  async append(ref: RunStreamWriterRef, parts: readonly RunStreamPart[]): Promise<number> {
    const pool = await this.ready();
    const values = [ref.runId, ref.step, ref.attempt, ref.execution, JSON.stringify(parts), this.table];
    for (let tries = 1; ; tries++) {
      try {
        const { rows } = await pool.query({ text: this.sql.append, values, query_timeout: QUERY_TIMEOUT_MS });
        if (Date.now() - this.lastPrune > STREAM_PRUNE_EVERY_MS) void this.prune().catch(() => undefined);
        return Number((rows[0] as { seq: string | number }).seq);
      } catch (error) {
        // Two writers of one run took the same cursor (a zombie attempt beside its retry): the
        // loser computes the next one. The primary key, not a lock, keeps the cursors gap-free.
        if ((error as { code?: unknown }).code !== '23505' || tries >= 20) throw error;
      }
    }
  }

  /** {@inheritDoc RunStreamStore.read} */
  async read(runId: string, after: number, limit = DEFAULT_STREAM_READ_LIMIT): Promise<RunStreamBatch[]> {
    const pool = await this.ready();
    const { rows } = await pool.query({
      text: this.sql.read,
      values: [runId, after, limit],
      query_timeout: QUERY_TIMEOUT_MS,
    });
    return (rows as Row[]).map((r) => ({
      runId,
      cursor: Number(r.seq),
      step: r.step,
      attempt: r.attempt,
      execution: r.execution,
      parts: JSON.parse(r.parts) as RunStreamPart[],
    }));
  }

  /** {@inheritDoc RunStreamStore.waitForAppend} */
  async waitForAppend(runId: string, after: number, signal?: AbortSignal): Promise<void> {
    await this.listening();
    let wake: (() => void) | undefined;
    // Subscribed before the check: a batch committed between the two still wakes this reader.
    const woken = abortableWait(signal, this.options.safetyPollMs ?? DEFAULT_PG_STREAM_SAFETY_POLL_MS, (done) => {
      wake = done;
      return this.waiters.add(runId, done);
    });
    const pool = await this.ready();
    const { rows } = await pool.query({ text: this.sql.last, values: [runId], query_timeout: QUERY_TIMEOUT_MS });
    if (Number((rows[0] as { seq: string | null } | undefined)?.seq ?? 0) > after) wake?.();
    return woken;
  }

  /** {@inheritDoc RunStreamStore.prune} */
  async prune(): Promise<number> {
    this.lastPrune = Date.now();
    const pool = await this.ready();
    const retention = this.options.retentionMs ?? DEFAULT_STREAM_RETENTION_MS;
    const { rowCount } = await pool.query({
      text: this.sql.prune,
      values: [retention],
      query_timeout: QUERY_TIMEOUT_MS,
    });
    return rowCount ?? 0;
  }

  /** {@inheritDoc RunStreamStore.close} */
  async close(): Promise<void> {
    this.closed = true;
    this.waiters.wakeAll();
    const listener = this.listener;
    const pool = this.pool;
    this.listener = undefined;
    this.pool = undefined;
    await listener?.then((c) => c.end()).catch(() => undefined);
    await pool?.then((p) => p.end()).catch(() => undefined);
  }

  /** The pool, with the table created. */
  private ready(): Promise<PgPoolLike> {
    if (this.closed) return Promise.reject(new Error('PostgresRunStreamStore is closed'));
    this.pool ??= loadPg().then(async ({ Pool }) => {
      const pool = new Pool({
        connectionTimeoutMillis: 3000,
        max: 4,
        ...this.options.pool,
        connectionString: this.connectionString,
      });
      pool.on('error', () => undefined); // an idle connection that dies is replaced on the next query
      try {
        await pool.query({ text: this.sql.schema, query_timeout: QUERY_TIMEOUT_MS });
      } catch (error) {
        // Two processes creating the table at once: one wins, the other's IF NOT EXISTS races on the catalog.
        const code = (error as { code?: unknown }).code;
        if (code !== '23505' && code !== '42P07') throw error;
      }
      return pool;
    });
    return this.pool.catch((error: unknown) => {
      this.pool = undefined; // the server may be back on the next call
      throw error;
    });
  }

  /** The listening connection, connected and `LISTEN`ing. */
  private listening(): Promise<PgClientLike> {
    if (this.closed) return Promise.reject(new Error('PostgresRunStreamStore is closed'));
    const current = (this.listener ??= loadPg().then(async ({ Client }) => {
      const client = new Client({
        connectionTimeoutMillis: 3000,
        ...this.options.pool,
        connectionString: this.connectionString,
      });
      const lost = (): void => {
        if (this.listener === current) this.listener = undefined;
        // Whatever was notified while no one listened: every reader reads again.
        this.waiters.wakeAll();
        void client.end().catch(() => undefined);
      };
      client.on('error', lost);
      client.on('end', lost);
      client.on('notification', (message) => {
        if (message.channel === this.table && message.payload !== undefined) this.waiters.wake(message.payload);
      });
      await client.connect();
      await client.query({ text: `LISTEN "${this.table}"`, query_timeout: QUERY_TIMEOUT_MS });
      return client;
    }));
    return current.catch((error: unknown) => {
      if (this.listener === current) this.listener = undefined;
      throw error;
    });
  }
}

interface Row {
  readonly seq: string | number;
  readonly step: number;
  readonly attempt: number;
  readonly execution: string;
  readonly parts: string;
}
