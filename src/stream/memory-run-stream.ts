import { RunStreamClosedError } from '../errors/errors.js';
import {
  DEFAULT_STREAM_READ_LIMIT,
  type RunStreamBatch,
  type RunStreamKey,
  type RunStreamPart,
  type RunStreamStore,
  type RunStreamWriterRef,
} from './run-stream-store.js';
import { streamIdOf } from './run-stream-key.js';
import { streamRetentionOption } from './run-stream-options.js';
import { abortableWait } from './wait.js';
import { RunWaiters } from './run-waiters.js';

/** What {@link MemoryRunStreamStore} takes. */
export interface MemoryRunStreamOptions {
  /** How long a batch is kept, in ms: 1 to 100 years. Default 7 days (`DEFAULT_STREAM_RETENTION_MS`). */
  readonly retentionMs?: number;
}

interface Stream {
  /** The last cursor handed out: kept when every batch is pruned, so cursors only grow. */
  head: number;
  batches: Array<RunStreamBatch & { readonly at: number }>;
}

/**
 * A {@link RunStreamStore} in this process's memory, for tests and single-process setups: the
 * workers and the readers must share the object. Readers wake on every append, no polling. Each
 * stream ever written keeps a few bytes (its last cursor) for the life of the object.
 */
export class MemoryRunStreamStore implements RunStreamStore {
  private readonly streams = new Map<string, Stream>();
  private readonly waiters = new RunWaiters();
  private readonly retentionMs: number;
  private closed = false;

  /** @throws InvalidEffectStoreSpecError for a `retentionMs` outside its range. */
  constructor(options: MemoryRunStreamOptions = {}) {
    this.retentionMs = streamRetentionOption('MemoryRunStreamStore', options.retentionMs);
  }

  /** {@inheritDoc RunStreamStore.append} */
  append(ref: RunStreamWriterRef, parts: readonly RunStreamPart[]): Promise<number> {
    return this.guard(() => {
      const id = streamIdOf(ref);
      let stream = this.streams.get(id);
      if (stream === undefined) this.streams.set(id, (stream = { head: 0, batches: [] }));
      const cursor = ++stream.head;
      const { runId, workflowId, firstExecutionRunId, step, attempt, execution } = ref;
      // A copy: the caller may reuse its array.
      const batch = { runId, workflowId, firstExecutionRunId, step, attempt, execution, cursor };
      stream.batches.push({ ...batch, parts: structuredClone([...parts]), at: Date.now() });
      this.waiters.wake(id);
      return cursor;
    });
  }

  /** {@inheritDoc RunStreamStore.read} */
  read(key: RunStreamKey, after: number, limit = DEFAULT_STREAM_READ_LIMIT): Promise<RunStreamBatch[]> {
    return this.guard(() =>
      (this.streams.get(streamIdOf(key))?.batches ?? [])
        .filter((b) => b.cursor > after)
        .slice(0, limit)
        // Copies: a reader that edits what it got must not change what the next one reads.
        .map(({ at: _at, ...batch }) => structuredClone(batch)),
    );
  }

  /** {@inheritDoc RunStreamStore.waitForAppend} */
  waitForAppend(key: RunStreamKey, after: number, signal?: AbortSignal): Promise<void> {
    return this.guard(() => {
      const id = streamIdOf(key);
      if ((this.streams.get(id)?.batches.at(-1)?.cursor ?? 0) > after) return Promise.resolve();
      return abortableWait(signal, undefined, (wake) => this.waiters.add(id, wake));
    });
  }

  /** {@inheritDoc RunStreamStore.prune} */
  prune(): Promise<number> {
    return this.guard(() => {
      const horizon = Date.now() - this.retentionMs;
      let pruned = 0;
      for (const stream of this.streams.values()) {
        const kept = stream.batches.filter((b) => b.at > horizon);
        pruned += stream.batches.length - kept.length;
        stream.batches = kept;
      }
      return pruned;
    });
  }

  /** {@inheritDoc RunStreamStore.close} */
  close(): Promise<void> {
    this.closed = true;
    this.waiters.wakeAll(); // released now; what they call next is refused
    this.streams.clear();
    return Promise.resolve();
  }

  /** `op`'s answer as a promise, or its throw as a rejection; refused once closed. */
  private async guard<T>(op: () => T | Promise<T>): Promise<T> {
    if (this.closed) throw new RunStreamClosedError('memory run stream store');
    return op();
  }
}
