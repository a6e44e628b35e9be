import { EffectStoreSchemaError, RunStreamClosedError } from '../errors/errors.js';
import type { PgPoolConfig } from '../stores/postgres-types.js';
import {
  DEFAULT_STREAM_READ_LIMIT,
  STREAM_PRUNE_EVERY_MS,
  type RunStreamBatch,
  type RunStreamKey,
  type RunStreamPart,
  type RunStreamStore,
  type RunStreamWriterRef,
} from './run-stream-store.js';
import { streamKeyOf } from './run-stream-key.js';
import {
  MIN_PG_STREAM_SAFETY_POLL_MS,
  streamPollOption,
  streamRetentionOption,
  streamTableOption,
} from './run-stream-options.js';
import { abortableWait } from './wait.js';
import { RunWaiters } from './run-waiters.js';
import { postgresStreamSql } from './postgres-stream-sql.js';
import { loadPg, type PgClientLike, type PgPoolLike } from './postgres-stream-pg.js';

/** What {@link PostgresRunStreamStore} takes. */
export interface PostgresRunStreamOptions {
  /**
   * Table of the stream batches (and `<table>_head`, each stream's last cursor), also the `LISTEN`
   * channel. Default `chamvi_stream`: 1 to 55 lowercase letters, digits or underscores, not
   * starting with a digit (every name derived from it fits PostgreSQL's 63 bytes).
   */
  readonly table?: string;
  /** Options of the `pg` pool and listening connection (besides the URL): `max`, `ssl`, ... */
  readonly pool?: PgPoolConfig;
  /**
   * How long a waiting reader trusts the notifications before it reads anyway, in ms:
   * {@link MIN_PG_STREAM_SAFETY_POLL_MS} (100) to 2^31 - 1. Default
   * {@link DEFAULT_PG_STREAM_SAFETY_POLL_MS}: readers wake on `NOTIFY`, this only bounds what a
   * notification lost in a way the listening connection did not notice (none is known) could cost.
   */
  readonly safetyPollMs?: number;
  /** How long a batch is kept, in ms: 1 to 100 years. Default 7 days (`DEFAULT_STREAM_RETENTION_MS`). */
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
  private readonly safetyPollMs: number;
  private readonly retentionMs: number;
  private readonly sql: ReturnType<typeof postgresStreamSql>;
  private pool: Promise<PgPoolLike> | undefined;
  private listener: Promise<PgClientLike> | undefined;
  private readonly waiters = new RunWaiters();
  private lastPrune = 0;
  private closed = false;

  /** @throws InvalidEffectStoreSpecError for an option outside its range (named in the message). */
  constructor(
    private readonly connectionString: string,
    private readonly options: PostgresRunStreamOptions = {},
  ) {
    const name = 'PostgresRunStreamStore';
    this.table = streamTableOption(name, options.table, 'a-z');
    this.safetyPollMs = streamPollOption(
      name,
      'safetyPollMs',
      options.safetyPollMs,
      DEFAULT_PG_STREAM_SAFETY_POLL_MS,
      MIN_PG_STREAM_SAFETY_POLL_MS,
    );
    this.retentionMs = streamRetentionOption(name, options.retentionMs);
    this.sql = postgresStreamSql(this.table);
  }

  /** {@inheritDoc RunStreamStore.append} */
  async append(ref: RunStreamWriterRef, parts: readonly RunStreamPart[]): Promise<number> {
    const key = streamKeyOf(ref);
    const pool = await this.ready();
    const values = [...key, ref.step, ref.attempt, ref.execution, JSON.stringify(parts), this.table];
    for (let tries = 1; ; tries++) {
      try {
        const { rows } = await pool.query({ text: this.sql.append, values, query_timeout: QUERY_TIMEOUT_MS });
        if (Date.now() - this.lastPrune > STREAM_PRUNE_EVERY_MS) void this.prune().catch(() => undefined);
        return Number((rows[0] as { seq: string | number }).seq);
      } catch (error) {
        // The head row serialises a stream's writers; a cursor taken twice means a head row lowered
        // by hand below a batch still there: the next try takes the one after that batch.
        if ((error as { code?: unknown }).code !== '23505' || tries >= 20) throw error;
      }
    }
  }

  /** {@inheritDoc RunStreamStore.read} */
  async read(key: RunStreamKey, after: number, limit = DEFAULT_STREAM_READ_LIMIT): Promise<RunStreamBatch[]> {
    const [runId, workflowId, firstExecutionRunId] = streamKeyOf(key);
    const pool = await this.ready();
    const { rows } = await pool.query({
      text: this.sql.read,
      values: [runId, workflowId, firstExecutionRunId, after, limit],
      query_timeout: QUERY_TIMEOUT_MS,
    });
    return (rows as Row[]).map((r) => ({
      runId,
      workflowId,
      firstExecutionRunId,
      cursor: Number(r.seq),
      step: r.step,
      attempt: r.attempt,
      execution: r.execution,
      parts: JSON.parse(r.parts) as RunStreamPart[],
    }));
  }

  /** {@inheritDoc RunStreamStore.waitForAppend} */
  async waitForAppend(key: RunStreamKey, after: number, signal?: AbortSignal): Promise<void> {
    const ids = streamKeyOf(key);
    await this.listening();
    // Closed while connecting: released like the readers already waiting.
    if (this.closed) return;
    let wake: () => void = () => undefined;
    // Subscribed before the check: a batch committed between the two still wakes this reader.
    // Notifications name the run id only (short payloads): another stream of the run id wakes
    // this reader too, which then reads nothing and waits again.
    const woken = abortableWait(signal, this.safetyPollMs, (done) => {
      wake = done;
      return this.waiters.add(ids[0], done);
    });
    try {
      const pool = await this.ready();
      const { rows } = await pool.query({ text: this.sql.last, values: ids, query_timeout: QUERY_TIMEOUT_MS });
      if (Number((rows[0] as { seq: string | null } | undefined)?.seq ?? 0) > after) wake();
    } catch (error) {
      wake(); // its timer must not outlive the failed wait
      if (this.closed) return;
      throw error;
    }
    return woken;
  }

  /** {@inheritDoc RunStreamStore.prune} */
  async prune(): Promise<number> {
    this.lastPrune = Date.now();
    const pool = await this.ready();
    const { rowCount } = await pool.query({
      text: this.sql.prune,
      values: [this.retentionMs],
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
    if (this.closed) return Promise.reject(new RunStreamClosedError('PostgreSQL run stream store'));
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
      const { rows } = await pool.query({
        text: this.sql.layout,
        values: [this.table],
        query_timeout: QUERY_TIMEOUT_MS,
      });
      if (rows.length === 0) {
        await pool.end().catch(() => undefined);
        throw new EffectStoreSchemaError(
          `The run stream table "${this.table}" has batches without workflow identity (a development build's layout): drop it (it holds only what pages replay) or choose another table.`,
        );
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
    if (this.closed) return Promise.reject(new RunStreamClosedError('PostgreSQL run stream store'));
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
