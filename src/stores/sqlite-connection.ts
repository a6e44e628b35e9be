import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { ChamviError } from '../errors/chamvi-error.js';
import { EffectStoreOpenError } from '../errors/errors.js';
import { ensureSqliteSchema } from './sqlite-schema.js';
import { GroupCommit } from './sqlite-group-commit.js';
import { sqliteStatements, type SqliteStatements } from './sqlite-statements.js';

/** How long SQLite itself may block the event loop on a lock before the store retries asynchronously, in ms. */
const SYNC_BUSY_MS = 20;

/**
 * One connection to an SQLite effect store file: opened (folder created, WAL, `synchronous=FULL`,
 * schema created or checked) on first use, with lock waits that keep the event loop running. A
 * file that cannot be opened fails every call with {@link EffectStoreOpenError} naming its path.
 */
export class SqliteConnection {
  private db: DatabaseSync | undefined;
  private sql: SqliteStatements | undefined;
  private readonly commits = new GroupCommit<SqliteStatements>({
    open: () => this.open(),
    exec: (statement) => (this.db as DatabaseSync).exec(statement),
    inTransaction: () => this.db?.isTransaction === true,
    isBusy,
  });

  /** @param busyTimeoutMs how long one operation waits for another process's write lock, in ms. */
  constructor(
    private readonly path: string,
    private readonly table: string,
    private readonly busyTimeoutMs: number,
  ) {}

  /**
   * Runs `op` on the open database. While another process holds the write lock, SQLite blocks
   * for at most a few ms, then this retries asynchronously with jittered backoff until
   * `busyTimeoutMs`, so heartbeats and timers keep running; after that the error is thrown.
   */
  async run<T>(op: (sql: SqliteStatements) => T): Promise<T> {
    const deadline = Date.now() + this.busyTimeoutMs;
    for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
      try {
        return op(this.open());
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random())));
    }
  }

  /**
   * Runs the write `op` in a transaction it may share with the other writes issued in the same
   * event-loop turn (group commit: one `BEGIN IMMEDIATE … COMMIT`, so one fsync, for all of them),
   * each in a savepoint of its own, so that a throwing op undoes only its own changes. The promise
   * settles after the `COMMIT`: when it resolves, the write is durable. A lone write waits for
   * nothing but the end of the current turn (`setImmediate`).
   */
  write<T>(op: (sql: SqliteStatements) => T): Promise<T> {
    return this.commits.add(op, this.busyTimeoutMs);
  }

  /**
   * Runs `work` in a `BEGIN IMMEDIATE` transaction. IMMEDIATE takes the write lock up front: a
   * conditional write and the read that explains a refusal see one state, and a lock conflict
   * shows up at BEGIN (and is retried by {@link run}) rather than halfway through.
   */
  tx<T>(work: () => T): T {
    const db = this.db;
    if (db === undefined) throw new Error('SqliteConnection.tx called before the database was opened');
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Closes the file; the next {@link run} reopens it. */
  close(): void {
    this.db?.close();
    this.db = undefined;
    this.sql = undefined;
  }

  private open(): SqliteStatements {
    if (this.sql !== undefined) return this.sql;
    const db = this.openFile();
    try {
      db.exec(`PRAGMA busy_timeout = ${SYNC_BUSY_MS}`);
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = FULL');
      this.db = db;
      this.tx(() => ensureSqliteSchema(db, this.table, this.path));
      this.sql = sqliteStatements(db, this.table);
      return this.sql;
    } catch (error) {
      this.db = undefined;
      db.close();
      throw ChamviError.isInstance(error) || isBusy(error) ? error : this.cannotOpen(error);
    }
  }

  /**
   * Opens the file, creating its folder first (like `mkdir -p`): a store path such as
   * `.chamvi/effects.db` in a fresh checkout must work, not fail every call until someone creates
   * `.chamvi/`.
   */
  private openFile(): DatabaseSync {
    if (isFilePath(this.path)) {
      try {
        mkdirSync(dirname(resolve(this.path)), { recursive: true });
      } catch (error) {
        throw this.cannotOpen(error, `its folder ${dirname(resolve(this.path))} cannot be created`);
      }
    }
    try {
      // Loaded when the first file opens, not when the module does: importing the package (or a
      // store that never opens) must not load node:sqlite, which warns on Node 22.
      const sqlite = process.getBuiltinModule('node:sqlite');
      return new sqlite.DatabaseSync(this.path);
    } catch (error) {
      throw isBusy(error) ? error : this.cannotOpen(error);
    }
  }

  private cannotOpen(error: unknown, what = 'it cannot be opened'): EffectStoreOpenError {
    const reason = error instanceof Error ? error.message : String(error);
    return new EffectStoreOpenError(
      `The SQLite effect store at ${resolve(this.path)} cannot be used: ${what} (${reason}). Check that the path names a file in a folder this process may write to (or that can be created), or pick another path.`,
      { cause: error },
    );
  }
}

function isFilePath(path: string): boolean {
  return path !== '' && path !== ':memory:' && !path.startsWith('file:');
}

function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: unknown }).errcode;
  // SQLITE_BUSY (5) and SQLITE_LOCKED (6), extended codes included (low byte).
  return typeof code === 'number' && ((code & 0xff) === 5 || (code & 0xff) === 6);
}
