/** What {@link GroupCommit} needs of a connection. */
export interface GroupCommitTarget<S> {
  /** Opens the database (or returns the open one) and its statements; may throw a busy error. */
  open(): S;
  exec(statement: string): void;
  inTransaction(): boolean;
  isBusy(error: unknown): boolean;
}

interface Pending<S> {
  readonly op: (sql: S) => unknown;
  readonly deadline: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit for one SQLite connection: the writes issued in one event-loop turn run in one
 * `BEGIN IMMEDIATE … COMMIT` (one fsync under `synchronous=FULL` instead of one per write), each
 * inside a `SAVEPOINT` of its own so that a write that throws rolls back only its own changes and
 * fails only its own promise. Every promise of a batch settles after its `COMMIT` returned, so a
 * resolved write is durable; a failing `COMMIT` fails the whole batch (none of it was written).
 * While another process holds the write lock, the batch is retried with jittered backoff until
 * its oldest write's deadline, the event loop running meanwhile.
 */
export class GroupCommit<S> {
  private queue: Array<Pending<S>> = [];
  private scheduled = false;

  constructor(private readonly target: GroupCommitTarget<S>) {}

  add<T>(op: (sql: S) => T, busyTimeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        op,
        deadline: Date.now() + busyTimeoutMs,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (this.scheduled) return;
      this.scheduled = true;
      // setImmediate: after the I/O callbacks of this turn, so concurrent activities' writes meet
      // in one batch, and a lone write waits for nothing else.
      setImmediate(() => {
        this.scheduled = false;
        const batch = this.queue;
        this.queue = [];
        void this.flush(batch);
      });
    });
  }

  private async flush(batch: Array<Pending<S>>): Promise<void> {
    for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
      try {
        this.commit(batch);
        return;
      } catch (error) {
        if (!this.target.isBusy(error)) return failAll(batch, error);
        const expired = batch.filter((p) => Date.now() >= p.deadline);
        if (expired.length > 0) failAll(expired, error);
        batch = batch.filter((p) => Date.now() < p.deadline);
        if (batch.length === 0) return;
      }
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random())));
    }
  }

  /** One transaction for the batch; throws (having rolled back) only when it could not commit at all. */
  private commit(batch: ReadonlyArray<Pending<S>>): void {
    const sql = this.target.open();
    // A lone write needs no savepoint: its failure rolls back the transaction, which is only its own.
    const alone = batch.length === 1;
    this.target.exec('BEGIN IMMEDIATE');
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      for (const pending of batch) {
        if (!alone) this.target.exec('SAVEPOINT chamvi_op');
        try {
          const value = pending.op(sql);
          if (!alone) this.target.exec('RELEASE chamvi_op');
          outcomes.push({ ok: true, value });
        } catch (error) {
          if (alone) {
            outcomes.push({ ok: false, error });
            break;
          }
          this.target.exec('ROLLBACK TO chamvi_op');
          this.target.exec('RELEASE chamvi_op');
          outcomes.push({ ok: false, error });
        }
      }
      this.target.exec(alone && outcomes[0]?.ok === false ? 'ROLLBACK' : 'COMMIT');
    } catch (error) {
      if (this.target.inTransaction()) this.target.exec('ROLLBACK');
      throw error;
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok === true) pending.resolve(outcome.value);
      else pending.reject(outcome?.error);
    });
  }
}

function failAll<S>(batch: ReadonlyArray<Pending<S>>, error: unknown): void {
  for (const pending of batch) pending.reject(error);
}
