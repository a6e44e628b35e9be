import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SQLITE_NOW_MS as NOW } from '../stores/sqlite-schema.js';
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

/** What {@link SqliteRunStreamStore} takes. */
export interface SqliteRunStreamOptions {
  /** Table of the stream batches. Default `chamvi_stream` (next to the effect store's tables when the file is shared). */
  readonly table?: string;
  /**
   * How often a waiting reader checks for a new batch, in ms. Default {@link DEFAULT_SQLITE_STREAM_POLL_MS}.
   * SQLite has no notifications across processes, so a reader in another process polls; each
   * check is one indexed `MAX(seq)` read.
   */
  readonly pollMs?: number;
  /** How long a batch is kept, in ms. Default {@link DEFAULT_STREAM_RETENTION_MS} (7 days). */
  readonly retentionMs?: number;
}

/** Default poll interval of SQLite stream readers: 50 ms (about 20 cheap reads a second per waiting reader). */
export const DEFAULT_SQLITE_STREAM_POLL_MS = 50;

interface Statements {
  readonly append: StatementSync;
  readonly read: StatementSync;
  readonly last: StatementSync;
  readonly prune: StatementSync;
}

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
  /** Readers of this object waiting: an append through it wakes them at once (no poll in one process). */
  private readonly local = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly path: string,
    options: SqliteRunStreamOptions = {},
  ) {
    this.table = options.table ?? 'chamvi_stream';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(this.table)) throw new TypeError(`Invalid stream table name "${this.table}".`);
    this.pollMs = options.pollMs ?? DEFAULT_SQLITE_STREAM_POLL_MS;
    this.retentionMs = options.retentionMs ?? DEFAULT_STREAM_RETENTION_MS;
  }

  /** {@inheritDoc RunStreamStore.append} */
  async append(ref: RunStreamWriterRef, parts: readonly RunStreamPart[]): Promise<number> {
    const row = await this.run((sql) =>
      // One statement: the next cursor is computed and taken under SQLite's write lock, so two
      // writers of a run (a zombie attempt beside its retry) cannot take the same one.
      sql.append.get({
        run: ref.runId,
        step: ref.step,
        attempt: ref.attempt,
        execution: ref.execution,
        parts: JSON.stringify(parts),
      }),
    );
    if (Date.now() - this.lastPrune > STREAM_PRUNE_EVERY_MS) void this.prune().catch(() => undefined);
    for (const wake of [...this.local]) wake();
    return Number((row as { seq: number | bigint }).seq);
  }

  /** {@inheritDoc RunStreamStore.read} */
  async read(runId: string, after: number, limit = DEFAULT_STREAM_READ_LIMIT): Promise<RunStreamBatch[]> {
    const rows = await this.run((sql) => sql.read.all({ run: runId, after, limit }));
    return (rows as unknown as Row[]).map((r) => toBatch(runId, r));
  }

  /** {@inheritDoc RunStreamStore.waitForAppend} */
  async waitForAppend(runId: string, after: number, signal?: AbortSignal): Promise<void> {
    // Closed: the caller reads next and learns it (a closed store would else be reopened by the poll).
    while (signal?.aborted !== true && !this.closed) {
      const last = await this.run((sql) => sql.last.get({ run: runId }));
      if (Number((last as { seq?: number | bigint | null } | undefined)?.seq ?? 0) > after) return;
      await abortableWait(signal, this.pollMs, (wake) => {
        this.local.add(wake);
        return () => this.local.delete(wake);
      });
    }
  }

  /** {@inheritDoc RunStreamStore.prune} */
  async prune(): Promise<number> {
    this.lastPrune = Date.now();
    const result = await this.run((sql) => sql.prune.run({ retention: this.retentionMs }));
    return Number(result.changes);
  }

  /** {@inheritDoc RunStreamStore.close} */
  close(): Promise<void> {
    this.closed = true;
    for (const wake of [...this.local]) wake(); // released now, not at their next poll
    this.db?.close();
    this.db = undefined;
    this.sql = undefined;
    return Promise.resolve();
  }

  /** Runs `op`, retrying asynchronously while another process holds the write lock (up to 5 s). */
  private async run<T>(op: (sql: Statements) => T): Promise<T> {
    const deadline = Date.now() + 5000;
    for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
      try {
        return op(this.open());
      } catch (error) {
        const code = (error as { errcode?: unknown }).errcode;
        const busy = typeof code === 'number' && ((code & 0xff) === 5 || (code & 0xff) === 6);
        if (!busy || Date.now() >= deadline) throw error;
      }
      await new Promise((done) => setTimeout(done, pause * (0.5 + Math.random())));
    }
  }

  private open(): Statements {
    if (this.closed) throw new Error('SqliteRunStreamStore is closed');
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
      const t = `"${this.table}"`;
      db.exec(`
        CREATE TABLE IF NOT EXISTS ${t} (
          run_id TEXT NOT NULL,
          seq INTEGER NOT NULL,
          step INTEGER NOT NULL,
          attempt INTEGER NOT NULL,
          execution TEXT NOT NULL,
          parts TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS "${this.table}_created" ON ${t} (created_at);`);
      this.sql = {
        append: db.prepare(`
          INSERT INTO ${t} (run_id, seq, step, attempt, execution, parts, created_at)
          SELECT :run, COALESCE(MAX(seq), 0) + 1, :step, :attempt, :execution, :parts, ${NOW}
          FROM ${t} WHERE run_id = :run
          RETURNING seq`),
        read: db.prepare(
          `SELECT seq, step, attempt, execution, parts FROM ${t} WHERE run_id = :run AND seq > :after ORDER BY seq LIMIT :limit`,
        ),
        last: db.prepare(`SELECT MAX(seq) AS seq FROM ${t} WHERE run_id = :run`),
        prune: db.prepare(`DELETE FROM ${t} WHERE created_at <= ${NOW} - :retention`),
      };
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

function toBatch(runId: string, r: Row): RunStreamBatch {
  return {
    runId,
    cursor: Number(r.seq),
    step: Number(r.step),
    attempt: Number(r.attempt),
    execution: r.execution,
    parts: JSON.parse(r.parts) as RunStreamPart[],
  };
}
