import type { RunStreamPart, RunStreamStore, RunStreamWriterRef } from './run-stream-store.js';

/** What a {@link RunStreamWriter} reports when the store refuses a batch or cannot keep up. */
export type RunStreamWriteProblem = (message: string, meta: { error: unknown; parts: number }) => void;

/**
 * The most a model step waits for its run stream when it ends, in ms: 500. At the end of a step
 * the writer waits for the write in flight and writes what is left (retrying a failed write);
 * what the store has not taken within this budget is dropped with one warning and the step
 * returns. A stream store that is slow, failing, or does not answer at all (a black-holed
 * database) therefore adds at most this much to a step, and never changes its result; writes
 * during the step never hold it.
 */
export const STREAM_CLOSE_BUDGET_MS = 500;

/** Writes tried at the end of a step, within {@link STREAM_CLOSE_BUDGET_MS}, for a store that fails at once. */
const CLOSE_WRITES = 3;

/**
 * Writes one step attempt's parts to a {@link RunStreamStore} as they come, batched without a
 * timer: the first part is written at once; parts that arrive while a write is in flight wait
 * and go together in the next write. A token therefore costs no round trip of its own, latency
 * stays one write, and a fast model simply makes bigger batches. Adjacent deltas of one part are
 * merged. A failed write keeps its parts and tries again with the next one (order is kept).
 * {@link RunStreamWriter.close} waits at most {@link STREAM_CLOSE_BUDGET_MS}; what is still
 * unwritten then is dropped: the stream is for display, and the step's result does not depend on
 * it. A writer warns at most once: at the first failed write, or when it drops parts.
 */
export class RunStreamWriter {
  private pending: RunStreamPart[] = [];
  private flushing: Promise<void> | undefined;
  /** Parts of the write in flight. */
  private inFlight = 0;
  private warned = false;
  private lastError = '';
  private dropped = false;
  /** Batches written. */
  batches = 0;

  constructor(
    private readonly store: RunStreamStore,
    private readonly ref: RunStreamWriterRef,
    private readonly warn: RunStreamWriteProblem = () => undefined,
  ) {}

  /** Queues `part`; it is written with the next batch. Ignored once the writer has given up. */
  push(part: RunStreamPart): void {
    if (this.dropped) return;
    const last = this.pending.at(-1);
    if (last !== undefined && mergeable(last, part)) {
      this.pending[this.pending.length - 1] = { ...last, delta: last.delta + (part as typeof last).delta };
    } else {
      this.pending.push(part);
    }
    this.flushing ??= this.flush();
  }

  /**
   * Writes what is queued (after the write in flight); resolves once all of it is written, or
   * after at most {@link STREAM_CLOSE_BUDGET_MS} with the rest dropped. Never rejects.
   */
  async close(): Promise<void> {
    if (this.dropped) return;
    let expired = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const budget = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        expired = true;
        resolve();
      }, STREAM_CLOSE_BUDGET_MS);
    });
    try {
      for (let writes = 0; ; writes++) {
        await Promise.race([this.flushing, budget]);
        if (this.pending.length === 0 && this.flushing === undefined) return;
        if (expired) {
          this.drop('no answer in time');
          return;
        }
        if (writes === CLOSE_WRITES) {
          this.drop(`it kept failing: ${this.lastError}`);
          return;
        }
        this.flushing = this.flush();
      }
    } finally {
      clearTimeout(timer);
    }
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0 && !this.dropped) {
        const parts = this.pending;
        this.pending = [];
        this.inFlight = parts.length;
        try {
          await this.store.append(this.ref, parts);
          this.batches++;
        } catch (error) {
          // A late failure of a writer that gave up: its parts are gone already.
          if (this.dropped) return;
          this.lastError = error instanceof Error ? error.message : String(error);
          // Back in front of what arrived meanwhile: the order of the stream is kept.
          this.pending = [...parts, ...this.pending];
          this.problem(
            `a write failed (${this.lastError}); its ${this.pending.length} parts are kept for the next write. What is still unwritten ${STREAM_CLOSE_BUDGET_MS} ms after the step ends is dropped; the step's result does not depend on the stream. No more warnings for this step.`,
            error,
            this.pending.length,
          );
          return;
        } finally {
          this.inFlight = 0;
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private drop(reason: string): void {
    const parts = this.pending.length + this.inFlight;
    this.dropped = true;
    this.pending = [];
    this.problem(
      `the store did not take the step's last ${parts} parts within ${STREAM_CLOSE_BUDGET_MS} ms of its end (${reason}); they are dropped, and readers may miss them. The step's result does not depend on the stream.`,
      new Error(reason),
      parts,
    );
  }

  private problem(text: string, error: unknown, parts: number): void {
    if (this.warned) return;
    this.warned = true;
    const { runId, step, attempt } = this.ref;
    this.warn(`[chamvi] run stream of run ${runId}, step ${step}, attempt ${attempt}: ${text}`, { error, parts });
  }
}

type Delta = Extract<RunStreamPart, { delta: string }>;

function mergeable(last: RunStreamPart, next: RunStreamPart): last is Delta {
  if (last.type !== next.type) return false;
  if (last.type === 'text-delta' || last.type === 'reasoning-delta') return last.id === (next as typeof last).id;
  if (last.type === 'tool-input-delta') return last.toolCallId === (next as typeof last).toolCallId;
  return false;
}
