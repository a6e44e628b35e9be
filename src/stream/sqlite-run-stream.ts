import type { DatabaseSync } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { RunStreamClosedError } from '../errors/errors.js';
import {
  DEFAULT_STREAM_READ_LIMIT,
  STREAM_PRUNE_EVERY_MS,
  type RunStreamBatch,
  type RunStreamKey,
  type RunStreamPart,
  type RunStreamStore,
  type RunStreamWriterRef,
} from './run-stream-store.js';
import { streamIdOf, streamKeyOf } from './run-stream-key.js';
import {
  MIN_SQLITE_STREAM_POLL_MS,
  streamPollOption,
  streamRetentionOption,
  streamTableOption,
} from './run-stream-options.js';
import { RunWaiters } from './run-waiters.js';
import { prepareSqliteStream, type SqliteStreamStatements as Statements } from './sqlite-stream-sql.js';
import { abortableWait } from './wait.js';

/** What {@link SqliteRunStreamStore} takes. */
export interface SqliteRunStreamOptions {
  /**
   * Table of the stream batches (and `<table>_head`, each stream's last cursor). Default
   * `chamvi_stream` (next to the effect store's tables when the file is shared): 1 to 55 letters,
   * digits or underscores, not starting with a digit.
   */
  readonly table?: string;
  /**
   * How often a waiting reader checks for a new batch, in ms: {@link MIN_SQLITE_STREAM_POLL_MS}
   * (10) to 2^31 - 1. Default {@link DEFAULT_SQLITE_STREAM_POLL_MS}. SQLite has no notifications
   * across processes, so a reader in another process polls; each check is one indexed `MAX(seq)` read.
   */
  readonly pollMs?: number;
  /** How long a batch is kept, in ms: 1 to 100 years. Default 7 days (`DEFAULT_STREAM_RETENTION_MS`). */
  readonly retentionMs?: number;
}

/** Default poll interval of SQLite stream readers: 50 ms (about 20 cheap reads a second per waiting reader). */
export const DEFAULT_SQLITE_STREAM_POLL_MS = 50;

/**
 * A {@link RunStreamStore} in an SQLite file (it may be the effect store's file: the batches have
 * their own table). Writers append one row per batch; readers in any process of the machine poll
 * every `pollMs` while they wait, and readers sharing this object with the writer (one process)
 * are woken by its appends at once.
 */
export class SqliteRunStreamStore implements RunStreamStore {
  private db: DatabaseSync | undefined;
  private sql: Statements | undefined;
  private readonly table: string;
  private readonly pollMs: number;
  private readonly retentionMs: number;
  private lastPrune = 0;
  /** Readers of this object waiting, by stream: an append through it wakes them at once (no poll in one process). */
  private readonly local = new RunWaiters();
  private closed = false;

  /** @throws InvalidEffectStoreSpecError for an option outside its range (named in the message). */
  constructor(
    private readonly path: string,
    options: SqliteRunStreamOptions = {},
  ) {
    const name = 'SqliteRunStreamStore';
    this.table = streamTableOption(name, options.table, 'A-Za-z');
    this.pollMs = streamPollOption(
      name,
      'pollMs',
      options.pollMs,
      DEFAULT_SQLITE_STREAM_POLL_MS,
      MIN_SQLITE_STREAM_POLL_MS,
    );
    this.retentionMs = streamRetentionOption(name, options.retentionMs);
  }

  /** {@inheritDoc RunStreamStore.append} */
  async append(ref: RunStreamWriterRef, parts: readonly RunStreamPart[]): Promise<number> {
    const key = keyParams(ref);
    const json = JSON.stringify(parts);
    const seq = await this.run((sql, db) => {
      // The head row and the batch in one transaction, under SQLite's write lock: two writers of a
      // stream (a zombie attempt beside its retry) cannot take the same cursor, and none is skipped.
      db.exec('BEGIN IMMEDIATE');
      try {
        const { seq } = sql.next.get(key) as { seq: number | bigint };
        const { step, attempt, execution } = ref;
        sql.insert.run({ ...key, seq, step, attempt, execution, parts: json });
        db.exec('COMMIT');
        return Number(seq);
      } catch (error) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw error;
      }
    });
    if (Date.now() - this.lastPrune > STREAM_PRUNE_EVERY_MS) void this.prune().catch(() => undefined);
    this.local.wake(streamIdOf(ref));
    return seq;
  }

  /** {@inheritDoc RunStreamStore.read} */
  async read(key: RunStreamKey, after: number, limit = DEFAULT_STREAM_READ_LIMIT): Promise<RunStreamBatch[]> {
    const params = keyParams(key);
    const rows = await this.run((sql) => sql.read.all({ ...params, after, limit }));
    return (rows as unknown as Row[]).map((r) => toBatch(key, r));
  }

  /** {@inheritDoc RunStreamStore.waitForAppend} */
  async waitForAppend(key: RunStreamKey, after: number, signal?: AbortSignal): Promise<void> {
    if (this.closed) throw new RunStreamClosedError('SQLite run stream store');
    const params = keyParams(key);
    const id = streamIdOf(key);
    // Closed while waiting: released; the caller's next call learns it (a poll would reopen the file).
    while (signal?.aborted !== true && !this.closed) {
      const last = await this.run((sql) => sql.last.get(params)).catch((error: unknown) => {
        if (this.closed) return undefined; // closed while the file was busy: released
        throw error;
      });
      if (Number((last as { seq?: number | bigint | null } | undefined)?.seq ?? 0) > after) return;
      await abortableWait(signal, this.pollMs, (wake) => this.local.add(id, wake));
    }
  }

  /** {@inheritDoc RunStreamStore.prune} */
  async prune(): Promise<number> {
    this.lastPrune = Date.now();
    const result = await this.run((sql) => sql.prune.run({ retention: this.retentionMs }));
    return Number(result.changes);
  }

  /** {@inheritDoc RunStreamStore.close} */
  async close(): Promise<void> {
    this.closed = true;
    this.local.wakeAll(); // released now, not at their next poll
    // After the released readers ran: closing the file checkpoints its WAL, synchronous I/O
    // (tens of ms) they must not wait behind. Nothing uses the file meanwhile: every call is refused.
    await new Promise((done) => setImmediate(done));
    this.db?.close();
    this.db = undefined;
    this.sql = undefined;
  }

  /** Runs `op`, retrying asynchronously while another process holds the write lock (up to 5 s). */
  private async run<T>(op: (sql: Statements, db: DatabaseSync) => T): Promise<T> {
    const deadline = Date.now() + 5000;
    for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
      try {
        const sql = this.open();
        return op(sql, this.db as DatabaseSync);
      } catch (error) {
        const code = (error as { errcode?: unknown }).errcode;
        const busy = typeof code === 'number' && ((code & 0xff) === 5 || (code & 0xff) === 6);
        if (!busy || Date.now() >= deadline) throw error;
      }
      await new Promise((done) => setTimeout(done, pause * (0.5 + Math.random())));
    }
  }

  private open(): Statements {
    if (this.closed) throw new RunStreamClosedError('SQLite run stream store');
    if (this.sql !== undefined) return this.sql;
    if (this.path !== ':memory:' && !this.path.startsWith('file:')) {
      mkdirSync(dirname(resolve(this.path)), { recursive: true });
    }
    // Loaded on first open: importing the module must not load node:sqlite (it warns on Node 22).
    const db = new (process.getBuiltinModule('node:sqlite').DatabaseSync)(this.path);
    try {
      db.exec('PRAGMA busy_timeout = 20');
      db.exec('PRAGMA journal_mode = WAL');
      // NORMAL, not FULL: a batch lost to a power cut costs a re-render, not an effect.
      db.exec('PRAGMA synchronous = NORMAL');
      this.sql = prepareSqliteStream(db, this.table, this.path);
      this.db = db;
      return this.sql;
    } catch (error) {
      db.close();
      throw error;
    }
  }
}

interface Row {
  readonly seq: number | bigint;
  readonly step: number | bigint;
  readonly attempt: number | bigint;
  readonly execution: string;
  readonly parts: string;
}

/** The named parameters of stream `key` (its ids checked). */
function keyParams(key: RunStreamKey): { run: string; workflow: string; first: string } {
  const [run, workflow, first] = streamKeyOf(key);
  return { run, workflow, first };
}

function toBatch(key: RunStreamKey, r: Row): RunStreamBatch {
  const [runId, workflowId, firstExecutionRunId] = streamKeyOf(key);
  return {
    runId,
    workflowId,
    firstExecutionRunId,
    cursor: Number(r.seq),
    step: Number(r.step),
    attempt: Number(r.attempt),
    execution: r.execution,
    parts: JSON.parse(r.parts) as RunStreamPart[],
  };
}
