import { MAX_TIMEOUT_MS, wholeOption } from '../stores/store-options.js';
import type { RunStreamBatch, RunStreamKey, RunStreamStore } from './run-stream-store.js';
import { streamCursorOption } from './stream-cursor.js';
import { linkedSignal } from './wait.js';

/** Accepted `checkEveryMs` of {@link readRunStream}: 10 ms to 2^31 - 1 ms (the longest delay Node's timers accept). */
export const CHECK_EVERY_RANGE = { min: 10, max: MAX_TIMEOUT_MS } as const;

/**
 * What {@link readRunStream} takes: the stream's key (the run id, the workflow id, and the first
 * execution run id of its chain; see {@link RunStreamKey}) and how to follow it.
 * @beta @experimental
 */
export interface ReadRunStreamOptions extends Omit<RunStreamKey, 'firstExecutionRunId'> {
  /** The store the workers write the run's stream to. */
  readonly store: RunStreamStore;
  /**
   * The first execution run id of the run's workflow chain (`firstExecutionRunId` of the handle
   * `startAgentRun` returns). Default `runId`: the agent workflow's run id is that id.
   */
  readonly firstExecutionRunId?: string;
  /**
   * Start after this cursor (a batch's `cursor` you already have): a whole number from 0 to
   * `Number.MAX_SAFE_INTEGER`. Default 0: from the start.
   */
  readonly from?: number;
  /** Stops following (the iterator ends) when it aborts. */
  readonly signal?: AbortSignal;
  /**
   * Asked whenever the stream is idle (nothing new after a wait): `true` ends the iterator once
   * what is stored has been read. Default: never (follow until `signal` aborts).
   */
  readonly until?: () => boolean | Promise<boolean>;
  /** The longest idle wait before `until` is asked again, in ms: 10 to 2^31 - 1. Default 1000. */
  readonly checkEveryMs?: number;
}

/**
 * The batches of a run's stream after a cursor, oldest first, following the run as its model
 * steps write: each batch exactly once, without gaps (cursors are consecutive). Reading again
 * from the last cursor you handled resumes exactly where you were, in this process or another.
 * Batches are raw: a retried step's attempts are all there (see `RunStreamUIState` for the
 * view that replaces them).
 *
 * @throws InvalidOptionError at once (before anything is read) for a `from` that is no cursor
 * (`NaN`, -1, `"abc"`, 1.5) or a `checkEveryMs` out of its range.
 * @beta @experimental
 */
export function readRunStream(options: ReadRunStreamOptions): AsyncGenerator<RunStreamBatch, void, undefined> {
  const from = streamCursorOption('readRunStream', options.from);
  const every = wholeOption('readRunStream', 'checkEveryMs', options.checkEveryMs, 1000, CHECK_EVERY_RANGE);
  return follow(options, from, every);
}

async function* follow(
  options: ReadRunStreamOptions,
  from: number,
  every: number,
): AsyncGenerator<RunStreamBatch, void, undefined> {
  const { store, signal } = options;
  const key = {
    runId: options.runId,
    workflowId: options.workflowId,
    firstExecutionRunId: options.firstExecutionRunId ?? options.runId,
  };
  let cursor = from;
  let finishing = false;
  while (signal?.aborted !== true) {
    const batches = await store.read(key, cursor);
    for (const batch of batches) {
      cursor = batch.cursor;
      yield batch;
    }
    if (batches.length > 0) continue;
    if (finishing) return;
    // Asked after an empty read, then read once more: batches committed before `until` turned true are not lost.
    if (options.until !== undefined && (await options.until())) {
      finishing = true;
      continue;
    }
    const wake = linkedSignal([signal], every);
    try {
      await store.waitForAppend(key, cursor, wake.signal);
    } finally {
      wake.dispose();
    }
  }
}
