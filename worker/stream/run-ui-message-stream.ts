import type { Client } from '@temporalio/client';
import type { UIMessageChunk } from 'ai';
import type { RunStreamStore } from '../../src/stream/run-stream-store.js';
import { RunStreamUIState } from '../../src/stream/ui-chunks.js';
import type { AgentRunOutput } from '../../workflows/agent-loop.js';
import { RunProgressParts } from './run-progress-parts.js';

/** What {@link runUIMessageStream} takes. */
export interface RunUIMessageStreamOptions {
  readonly client: Client;
  /** The run's workflow id (of `startAgentRun`, `chamvi run`). */
  readonly workflowId: string;
  /** The store the workers write the stream to (the worker's `stream` option). */
  readonly stream: RunStreamStore;
  /**
   * The run id (`ctx.run.runId`). Default: the run's progress query, else the workflow's first
   * execution run id (what the agent workflow uses unless your own workflow passes another).
   */
  readonly runId?: string;
  /**
   * Resume after this cursor: the value of the last `data-chamvi-cursor` part you handled. No
   * `start` chunk and nothing at or before the cursor is sent again; what follows continues the
   * parts you have. Default: from the start (a full replay, which is what `useChat`'s `resume` wants).
   */
  readonly from?: number;
  /** The `start` chunk's message id. Default `chamvi-<run id>`. */
  readonly messageId?: string;
  /** Ends the stream (the run goes on). */
  readonly signal?: AbortSignal;
  /**
   * How often the run's status, effect outcomes and pending approvals are asked while it runs, in
   * ms (a describe call and two queries). Default 1000. Text does not wait for it: it follows the store.
   */
  readonly pollMs?: number;
  /** Send `data-chamvi-effect` and `data-chamvi-approval` parts. Default `true`. */
  readonly progressParts?: boolean;
}

/** The `data-chamvi-cursor` part sent (transient: not kept in the message) after every batch. */
export type ChamviCursorChunk = { type: 'data-chamvi-cursor'; data: { cursor: number }; transient: true };

/**
 * An agent run as an AI SDK UI message stream, for `createUIMessageStreamResponse({ stream })` or
 * `pipeUIMessageStreamToResponse` (a route `useChat` talks to): `start`, then per model step
 * `start-step`, text / reasoning / tool-input parts as the step streams them, `finish-step`;
 * effect outcomes (`data-chamvi-effect`) and pending approvals (`data-chamvi-approval`) as they
 * settle; `finish` when the run completes (`error` when it failed, `abort` when it was cancelled,
 * terminated or timed out). A retried step sends `reset-step` and the new attempt's text.
 *
 * The text comes from the durable stream store, so a reader that connects late or again (a page
 * reload, a worker that crashed mid-step) replays what was shown from the store: nothing lost;
 * with `from`, nothing shown twice. The stream follows the run until its workflow closes.
 */
export function runUIMessageStream(options: RunUIMessageStreamOptions): ReadableStream<UIMessageChunk> {
  const stop = new AbortController();
  const signal = options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal]);
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      // After a cancel the controller is closed: nothing more may be enqueued, closed or errored.
      const open = (): boolean => !stop.signal.aborted;
      follow(options, signal, (chunk) => {
        if (open()) controller.enqueue(chunk);
      }).then(
        () => {
          if (open()) controller.close();
        },
        (error: unknown) => {
          if (open()) controller.error(error);
        },
      );
    },
    cancel() {
      stop.abort();
    },
  });
}

async function follow(
  options: RunUIMessageStreamOptions,
  signal: AbortSignal,
  emit: (chunk: UIMessageChunk) => void,
): Promise<void> {
  const { client, workflowId, stream } = options;
  const pollMs = options.pollMs ?? 1000;
  const progress = new RunProgressParts(client, workflowId);
  const withProgress = options.progressParts !== false;
  const runId = options.runId ?? (await resolveRunId(client, workflowId, progress));
  const ui = new RunStreamUIState();
  let cursor = 0;
  if (options.from !== undefined) {
    // Rebuilt silently up to the cursor, so what follows continues the parts the page has.
    while (cursor < options.from) {
      const batches = await stream.read(runId, cursor, Math.min(500, options.from - cursor));
      if (batches.length === 0) break;
      for (const batch of batches) ui.batch(batch);
      cursor = batches.at(-1)?.cursor ?? cursor;
    }
  } else {
    emit({ type: 'start', messageId: options.messageId ?? `chamvi-${runId}` });
  }
  const handle = client.workflow.getHandle(workflowId);
  let nextCheck = 0;
  let closed: string | undefined;
  while (signal.aborted !== true) {
    const batches = await stream.read(runId, cursor);
    for (const batch of batches) {
      const chunks = ui.batch(batch);
      const newStep = chunks.findIndex((c) => c.type === 'start-step');
      // Effects of the step before are settled when the next one starts: sent first, so they
      // belong to that step's parts (a `reset-step` of the new step must not remove them).
      if (newStep >= 0 && withProgress && batch.cursor > 1) chunks.splice(newStep, 0, ...(await progress.poll()));
      for (const chunk of chunks) emit(chunk);
      cursor = batch.cursor;
      const marker: ChamviCursorChunk = { type: 'data-chamvi-cursor', data: { cursor }, transient: true };
      emit(marker);
      // The run may end right after a step: look soon.
      if (batch.parts.some((p) => p.type === 'step-end')) nextCheck = Math.min(nextCheck, Date.now() + 100);
    }
    if (batches.length > 0) continue;
    if (closed !== undefined) break; // read once more after the close: nothing committed before it is lost
    if (Date.now() >= nextCheck) {
      nextCheck = Date.now() + pollMs;
      const status = (await handle.describe()).status.name;
      if (status !== 'RUNNING') {
        closed = status;
        continue;
      }
      if (withProgress) for (const chunk of await progress.poll()) emit(chunk);
    }
    const idle = AbortSignal.timeout(Math.max(1, nextCheck - Date.now()));
    await stream.waitForAppend(runId, cursor, AbortSignal.any([signal, idle]));
  }
  if (closed === undefined) return; // the reader stopped; the run goes on
  for (const chunk of ui.endStep()) emit(chunk);
  await finish(closed, handle, progress, withProgress, emit);
}

async function finish(
  status: string,
  handle: ReturnType<Client['workflow']['getHandle']>,
  progress: RunProgressParts,
  withProgress: boolean,
  emit: (chunk: UIMessageChunk) => void,
): Promise<void> {
  if (status !== 'COMPLETED') {
    if (withProgress) for (const chunk of await progress.poll()) emit(chunk);
    if (status === 'FAILED') {
      const reason = await handle.result().then(
        () => 'failed',
        (error: unknown) => {
          const cause = (error as { cause?: { cause?: unknown; message?: string } }).cause;
          const inner = cause?.cause instanceof Error ? cause.cause.message : cause?.message;
          return inner ?? (error instanceof Error ? error.message : String(error));
        },
      );
      emit({ type: 'error', errorText: `The run failed: ${reason}` });
    } else {
      emit({ type: 'abort', reason: status.toLowerCase() });
    }
    return;
  }
  const result = (await handle.result()) as AgentRunOutput;
  // The result is the last word on effects: every call, whatever the last query saw.
  if (withProgress) {
    for (const chunk of progress.effects(result.effects)) emit(chunk);
    for (const chunk of progress.approvals([])) emit(chunk);
  }
  emit({ type: 'finish', finishReason: result.steps.at(-1)?.finishReason === 'stop' ? 'stop' : 'other' });
}

/** The run id of `workflowId`: its progress query's, else its first execution's run id. */
async function resolveRunId(client: Client, workflowId: string, progress: RunProgressParts): Promise<string> {
  const answered = await progress.progress();
  if (answered !== undefined) return answered.runId;
  const description = await client.workflow.getHandle(workflowId).describe();
  const first = description.raw.workflowExecutionInfo?.firstRunId;
  return typeof first === 'string' && first.length > 0 ? first : description.runId;
}
