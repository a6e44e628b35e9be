import type { RunStreamPart, RunStreamStore, RunStreamWriterRef } from './run-stream-store.js';

/** What a {@link RunStreamWriter} reports when the store refuses a batch. */
export type RunStreamWriteProblem = (message: string, meta: { error: unknown; parts: number }) => void;

/**
 * Writes one step attempt's parts to a {@link RunStreamStore} as they come, batched without a
 * timer: the first part is written at once; parts that arrive while a write is in flight wait
 * and go together in the next write. A token therefore costs no round trip of its own, latency
 * stays one write, and a fast model simply makes bigger batches. Adjacent deltas of one part are
 * merged. A failed write keeps its parts and tries again with the next one (order is kept); what
 * is still unwritten after {@link RunStreamWriter.close} is dropped with one warning: the stream
 * is for display, and the step's result does not depend on it.
 */
export class RunStreamWriter {
  private pending: RunStreamPart[] = [];
  private flushing: Promise<void> | undefined;
  private warned = false;
  /** Batches written. */
  batches = 0;

  constructor(
    private readonly store: RunStreamStore,
    private readonly ref: RunStreamWriterRef,
    private readonly warn: RunStreamWriteProblem = () => undefined,
  ) {}

  /** Queues `part`; it is written with the next batch. */
  push(part: RunStreamPart): void {
    const last = this.pending.at(-1);
    if (last !== undefined && mergeable(last, part)) {
      this.pending[this.pending.length - 1] = { ...last, delta: last.delta + (part as typeof last).delta };
    } else {
      this.pending.push(part);
    }
    this.flushing ??= this.flush();
  }

  /** Writes what is queued (waiting for the write in flight first); resolves when done or given up. */
  async close(): Promise<void> {
    for (let tries = 0; tries < 3; tries++) {
      await this.flushing;
      if (this.pending.length === 0) return;
      this.flushing = this.flush();
    }
    await this.flushing;
    if (this.pending.length > 0) this.problem(new Error('the store kept failing'), 'dropped at the end of the step');
    this.pending = [];
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const parts = this.pending;
        this.pending = [];
        try {
          await this.store.append(this.ref, parts);
          this.batches++;
        } catch (error) {
          // Back in front of what arrived meanwhile: the order of the stream is kept.
          this.pending = [...parts, ...this.pending];
          this.problem(error, 'kept for the next write');
          return;
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private problem(error: unknown, what: string): void {
    if (this.warned) return;
    this.warned = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.warn(`[chamvi] run stream: a write failed (${reason}); its parts are ${what}`, {
      error,
      parts: this.pending.length,
    });
  }
}

type Delta = Extract<RunStreamPart, { delta: string }>;

function mergeable(last: RunStreamPart, next: RunStreamPart): last is Delta {
  if (last.type !== next.type) return false;
  if (last.type === 'text-delta' || last.type === 'reasoning-delta') return last.id === (next as typeof last).id;
  if (last.type === 'tool-input-delta') return last.toolCallId === (next as typeof last).toolCallId;
  return false;
}
