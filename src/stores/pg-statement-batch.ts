/**
 * Statements of one kind issued in the same event-loop turn, sent as one (see
 * `postgres-batch-statements.ts`): one round trip and one commit for all of them instead of one
 * each. A lone item runs its own statement, waiting for nothing but the end of the turn. When the
 * server refuses the batched statement (an error with an SQLSTATE: a deadlock with another
 * worker's batch, two items on one row), that statement committed nothing, so each item is run on
 * its own; any other failure (the connection dropped, a timeout: the commit may or may not have
 * happened) fails every item, as it would have failed each statement.
 */
export class PgStatementBatch<I, R> {
  private queue: Array<{ item: I; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;

  constructor(
    private readonly one: (item: I) => Promise<R>,
    /** The results of `items`, in their order. */
    private readonly many: (items: readonly I[]) => Promise<R[]>,
  ) {}

  run(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        const batch = this.queue;
        this.queue = [];
        void this.flush(batch);
      });
    });
  }

  private async flush(batch: Array<{ item: I; resolve: (r: R) => void; reject: (e: unknown) => void }>): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch as [(typeof batch)[number]];
      return this.one(only.item).then(only.resolve, only.reject);
    }
    let results: R[];
    try {
      results = await this.many(batch.map((b) => b.item));
    } catch (error) {
      if (!refusedByServer(error)) {
        for (const b of batch) b.reject(error);
        return;
      }
      await Promise.all(batch.map((b) => this.one(b.item).then(b.resolve, b.reject)));
      return;
    }
    batch.forEach((b, i) => b.resolve(results[i] as R));
  }
}

/** An error the server answered for the statement (it has an SQLSTATE); the statement's transaction then rolled back. */
function refusedByServer(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && code !== '57014';
}
