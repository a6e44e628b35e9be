import { CancelledFailure, TerminatedFailure, TimeoutFailure, type Client } from '@temporalio/client';
import type { UIMessageChunk } from 'ai';
import { abortableWait } from '../../src/stream/wait.js';
import { chainResult } from './chain-result.js';
import type { RunProgressParts } from './run-progress-parts.js';

/**
 * Watches a run beside the stream reader, so the reader never waits for it: every `pollMs` it
 * asks whether the workflow is still running (a describe call) and, with `progress`, for effect
 * outcomes and pending approvals. What it learns waits in {@link RunWatcher.take} and
 * {@link RunWatcher.closed}; {@link RunWatcher.signal} aborts to wake the reader when there is news.
 */
export class RunWatcher {
  /** The workflow's status once it is not running any more (`COMPLETED`, `FAILED`, ...). */
  closed: string | undefined;
  /** Whether the workflow id now names another run (the followed one closed): ask nothing of the id's latest run. */
  replaced = false;
  /**
   * The followed chain's execution as last described (after a reset: the reset's run), where its
   * result is read: the chain's first execution may be one a reset terminated.
   */
  run: string | undefined;
  /** Set when watching failed (the Temporal server could not be asked). */
  error: { readonly error: unknown } | undefined;
  private queued: UIMessageChunk[] = [];
  private news = new AbortController();
  private hurry = new AbortController();
  private readonly done: Promise<void>;
  private polling: Promise<void> | undefined;

  /**
   * @param chain the first execution run id of the run followed (describe's `firstRunId` when the
   * reader began): a later execution under the workflow id with another is a new run that reused
   * the id, so the followed one has closed; its status is then read from its own chain.
   * @param run the chain's execution when the reader began (the workflow id's current run).
   */
  constructor(
    client: Client,
    workflowId: string,
    chain: string | undefined,
    run: string | undefined,
    progress: RunProgressParts | undefined,
    pollMs: number,
    stop: AbortSignal,
  ) {
    this.run = run;
    const handle = client.workflow.getHandle(workflowId);
    this.done = (async () => {
      while (!stop.aborted) {
        const description = await client.withAbortSignal(stop, () => handle.describe());
        const first = description.raw.workflowExecutionInfo?.firstRunId;
        const replaced = chain !== undefined && typeof first === 'string' && first.length > 0 && first !== chain;
        if (!replaced) this.run = description.runId;
        const status = description.status.name;
        // PAUSED is not an end: the run goes on once unpaused.
        if (replaced || (status !== 'RUNNING' && status !== 'PAUSED')) {
          this.replaced = replaced;
          this.closed = replaced
            ? await closedStatus(() => chainResult(client, workflowId, this.run, stop), stop)
            : status;
          this.news.abort();
          return;
        }
        // Not awaited: a query waits for a worker (seconds when none is free), the close must not.
        if (progress !== undefined && this.polling === undefined) {
          this.polling = progress
            .poll()
            .then((chunks) => {
              // A sub-agent run that started or ended is news too: the reader follows its text.
              if (chunks.length === 0 && !progress.childrenChanged) return;
              this.queued.push(...chunks);
              this.news.abort();
            })
            .finally(() => (this.polling = undefined));
        }
        // Already hurried (a step ended while the server was asked): look again at once.
        if (!this.hurry.signal.aborted)
          await abortableWait(stop, pollMs, (wake) => {
            const hurry = this.hurry.signal;
            hurry.addEventListener('abort', wake, { once: true });
            return () => hurry.removeEventListener('abort', wake);
          });
        if (this.hurry.signal.aborted) this.hurry = new AbortController();
      }
    })();
    // A failed describe ends the watching; the reader sees it in `error` and fails the stream.
    this.done.catch((error: unknown) => {
      if (stop.aborted) return; // cancelled with the stream, not a failure
      this.error = { error };
      this.news.abort();
    });
  }

  /** Aborts when there is news (chunks to send, or the run closed); renewed by {@link RunWatcher.take}. */
  get signal(): AbortSignal {
    return this.news.signal;
  }

  /** The chunks learnt since the last call. */
  take(): UIMessageChunk[] {
    if (this.news.signal.aborted && this.closed === undefined && this.error === undefined)
      this.news = new AbortController();
    const chunks = this.queued;
    this.queued = [];
    return chunks;
  }

  /** Looks again soon (a step just ended: the run may be about to close). */
  soon(): void {
    this.hurry.abort();
  }
}

/** How the chain whose `result` this is closed, as describe names it. */
async function closedStatus(result: () => Promise<unknown>, stop: AbortSignal): Promise<string> {
  return result().then(
    () => 'COMPLETED',
    (error: unknown) => {
      if (stop.aborted) throw error;
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof TerminatedFailure) return 'TERMINATED';
      if (cause instanceof CancelledFailure) return 'CANCELLED';
      if (cause instanceof TimeoutFailure) return 'TIMED_OUT';
      return 'FAILED';
    },
  );
}
