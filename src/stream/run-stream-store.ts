/**
 * One piece of what a model step streamed, as the run stream stores it: text and reasoning deltas
 * (by the part id the provider gave them), a tool call's input as it is typed and once complete,
 * and the end of the step's stream. Adjacent deltas of one part may arrive merged into one.
 *
 * A `tool-result` is the answer the model is sent for a call of the step before (its tool message
 * part's `output`, as the model sees it: after `toModelOutput`, `execution-denied` for a denied
 * call, `error-text` for a failed one); the next model step writes its input's results first.
 * @beta @experimental
 */
export type RunStreamPart =
  | { readonly type: 'text-delta'; readonly id: string; readonly delta: string }
  | { readonly type: 'reasoning-delta'; readonly id: string; readonly delta: string }
  | { readonly type: 'tool-input-start'; readonly toolCallId: string; readonly toolName: string }
  | { readonly type: 'tool-input-delta'; readonly toolCallId: string; readonly delta: string }
  | { readonly type: 'tool-call'; readonly toolCallId: string; readonly toolName: string; readonly input: unknown }
  | { readonly type: 'tool-result'; readonly toolCallId: string; readonly toolName: string; readonly output: unknown }
  | { readonly type: 'step-end'; readonly finishReason: string };

/**
 * Which stream: one agent run (`runId`) of one Temporal workflow execution chain. A chain is what
 * Temporal links under one first execution run id: the executions a workflow id's start leads
 * to through continue-as-new, workflow retries and resets. Two workflows that share a run id
 * (a custom `runId`), or a workflow id started again for a new run, write to different streams.
 * @beta @experimental
 */
export interface RunStreamKey {
  /** The run (`ctx.run.runId`, the `runId` of the run's result). */
  readonly runId: string;
  /** The run's Temporal workflow id. */
  readonly workflowId: string;
  /**
   * The first execution run id of the workflow's chain: `workflowInfo().firstExecutionRunId` in
   * the workflow, `firstRunId` of `describe`, `firstExecutionRunId` of the handle `startAgentRun`
   * returns. The agent workflow's default run id is this id.
   */
  readonly firstExecutionRunId: string;
}

/** Who wrote a batch: one attempt of one model step of a run, in one execution of its chain. @beta @experimental */
export interface RunStreamWriterRef extends RunStreamKey {
  /** The model step (0-based). */
  readonly step: number;
  /** The Temporal attempt of the step's activity (1 for the first). */
  readonly attempt: number;
  /**
   * The Temporal workflow execution (run id) that scheduled the step: after a reset or
   * continue-as-new it differs, and the step numbers and attempts start over under it.
   */
  readonly execution: string;
}

/** Parts written together, with their place in their stream. @beta @experimental */
export interface RunStreamBatch extends RunStreamWriterRef {
  /**
   * Position of the batch in its stream: 1, 2, 3, ... without gaps, in the order the batches were
   * committed. Cursors only grow: pruning never gives a later batch a cursor already handed out
   * (each store keeps a stream's last cursor after its batches are gone). Reading "after" a
   * cursor returns exactly the batches that followed it.
   */
  readonly cursor: number;
  /** What the batch holds, in the order it was streamed. */
  readonly parts: readonly RunStreamPart[];
}

/**
 * Where the model steps of agent runs write what they stream, and where readers follow it: an
 * append-only log of batches per stream ({@link RunStreamKey}: run id, workflow id, first
 * execution run id), kept apart from the effect records (its own table), plus a way to wait for
 * the next batch. Implementations: {@link MemoryRunStreamStore} (one process),
 * `SqliteRunStreamStore` (readers poll), `PostgresRunStreamStore` (readers wake on `LISTEN/NOTIFY`).
 *
 * Retention: a batch is kept `retentionMs` after it was written (default
 * {@link DEFAULT_STREAM_RETENTION_MS}); stores prune on their own, at most once an hour while
 * they are written to, and on {@link RunStreamStore.prune}. A stream's last cursor is kept when
 * its batches are pruned (one small record per stream), so its cursors only grow.
 *
 * Closing: {@link RunStreamStore.close} releases every waiting reader at once; afterwards every
 * method but `close` rejects with `RunStreamClosedError`.
 * @beta @experimental
 */
export interface RunStreamStore {
  /** Appends one batch to the stream of `ref` and returns its cursor. */
  append(ref: RunStreamWriterRef, parts: readonly RunStreamPart[]): Promise<number>;
  /** The batches of stream `key` after cursor `after` (0: from the start), oldest first, at most `limit`. */
  read(key: RunStreamKey, after: number, limit?: number): Promise<RunStreamBatch[]>;
  /**
   * Resolves once stream `key` may have a batch after `after`: at once when it has one, else on
   * the next append (a notification) or the store's poll interval, whichever comes first; also
   * when `signal` aborts or the store is closed. Callers read again: a wake-up is a hint, not a
   * promise of data.
   */
  waitForAppend(key: RunStreamKey, after: number, signal?: AbortSignal): Promise<void>;
  /** Deletes batches past their retention (never a stream's last cursor); returns how many. */
  prune(): Promise<number>;
  /** Releases what the store opened (connections, files) and every waiting reader. */
  close(): Promise<void>;
}

/** Default retention of run stream batches: 7 days (the stream is for display; the run's result and conversation stay). */
export const DEFAULT_STREAM_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** How often a store prunes while it is written to, in ms. */
export const STREAM_PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Default read page, in batches. */
export const DEFAULT_STREAM_READ_LIMIT = 500;
