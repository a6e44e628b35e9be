import {
  DEFAULT_STREAM_READ_LIMIT,
  DEFAULT_STREAM_RETENTION_MS,
  type RunStreamBatch,
  type RunStreamPart,
  type RunStreamStore,
  type RunStreamWriterRef,
} from './run-stream-store.js';
import { abortableWait } from './wait.js';
import { RunWaiters } from './run-waiters.js';

/**
 * A {@link RunStreamStore} in this process's memory, for tests and single-process setups: the
 * workers and the readers must share the object. Readers wake on every append, no polling.
 */
export class MemoryRunStreamStore implements RunStreamStore {
  private readonly runs = new Map<string, Array<RunStreamBatch & { readonly at: number }>>();
  private readonly waiters = new RunWaiters();

  constructor(private readonly options: { readonly retentionMs?: number } = {}) {}

  /** {@inheritDoc RunStreamStore.append} */
  append(ref: RunStreamWriterRef, parts: readonly RunStreamPart[]): Promise<number> {
    let log = this.runs.get(ref.runId);
    if (log === undefined) this.runs.set(ref.runId, (log = []));
    const cursor = (log.at(-1)?.cursor ?? 0) + 1;
    // A copy: the caller may reuse its array.
    log.push({ ...ref, cursor, parts: structuredClone([...parts]), at: Date.now() });
    this.waiters.wake(ref.runId);
    return Promise.resolve(cursor);
  }

  /** {@inheritDoc RunStreamStore.read} */
  read(runId: string, after: number, limit = DEFAULT_STREAM_READ_LIMIT): Promise<RunStreamBatch[]> {
    const log = this.runs.get(runId) ?? [];
    return Promise.resolve(
      log
        .filter((b) => b.cursor > after)
        .slice(0, limit)
        .map(({ at: _at, ...batch }) => batch),
    );
  }

  /** {@inheritDoc RunStreamStore.waitForAppend} */
  waitForAppend(runId: string, after: number, signal?: AbortSignal): Promise<void> {
    if ((this.runs.get(runId)?.at(-1)?.cursor ?? 0) > after) return Promise.resolve();
    return abortableWait(signal, undefined, (wake) => this.waiters.add(runId, wake));
  }

  /** {@inheritDoc RunStreamStore.prune} */
  prune(): Promise<number> {
    const horizon = Date.now() - (this.options.retentionMs ?? DEFAULT_STREAM_RETENTION_MS);
    let pruned = 0;
    for (const [runId, log] of this.runs) {
      const kept = log.filter((b) => b.at > horizon);
      pruned += log.length - kept.length;
      if (kept.length === 0) this.runs.delete(runId);
      else this.runs.set(runId, kept);
    }
    return Promise.resolve(pruned);
  }

  /** {@inheritDoc RunStreamStore.close} */
  close(): Promise<void> {
    this.waiters.wakeAll();
    return Promise.resolve();
  }
}
