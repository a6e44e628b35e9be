import type { Client } from '@temporalio/client';
import type { UIMessageChunk } from 'ai';
import { MAX_TIMEOUT_MS, wholeOption } from '../../src/stores/store-options.js';
import { DEFAULT_STREAM_READ_LIMIT, type RunStreamStore } from '../../src/stream/run-stream-store.js';
import { streamCursorOption } from '../../src/stream/stream-cursor.js';
import { RunStreamUIState } from '../../src/stream/ui-chunks.js';
import { linkedSignal } from '../../src/stream/wait.js';
import { approvalIdOf, RunProgressParts } from './run-progress-parts.js';
import { finishRunStream } from './run-stream-finish.js';
import { chainResult } from './chain-result.js';
import { ExecutionStarts } from './execution-starts.js';
import { decidedApprovals, resolveRunId } from './run-identity.js';
import { withEffectMetadata } from './effect-metadata.js';
import { OpenCalls } from './open-calls.js';
import { ApprovalView } from './approval-view.js';
import { RunWatcher } from './run-watcher.js';
import { SubAgentView } from './sub-agent-view.js';

/** What {@link runUIMessageStream} takes. @beta @experimental */
export interface RunUIMessageStreamOptions {
  /** A Temporal client of the run's namespace. */
  readonly client: Client;
  /** The run's workflow id (of `startAgentRun`, `chamvi run`). */
  readonly workflowId: string;
  /** The store the workers write the stream to (the worker's `stream` option). */
  readonly stream: RunStreamStore;
  /**
   * The run id (`ctx.run.runId`). Default: the workflow's first execution run id, which the agent
   * workflow uses; pass it when your own workflow gives `runAgentLoop` another.
   */
  readonly runId?: string;
  /**
   * Resume after this cursor: the value of the last `data-chamvi-cursor` part you handled. No
   * `start` chunk and nothing at or before the cursor is sent again; what follows continues the
   * parts you have. Default: from the start (a full replay, which is what `useChat`'s `resume` wants).
   * A cursor is a whole number from 0 to `Number.MAX_SAFE_INTEGER`; anything else (`NaN`, -1,
   * `"abc"`, a page's forgery) sends only an `error` chunk ({@link RUN_STREAM_STOPPED}, naming the
   * option), never a replay.
   */
  readonly from?: number;
  /** The `start` chunk's message id. Default `chamvi-<run id>`. */
  readonly messageId?: string;
  /** Ends the stream (the run goes on). */
  readonly signal?: AbortSignal;
  /**
   * How often the run's status, effect outcomes and pending approvals are asked while it runs, in
   * ms (a describe call and two queries): a whole number from 100 to 2^31 - 1. Default
   * {@link DEFAULT_RUN_POLL_MS}. Text does not wait for it: it follows the store.
   */
  readonly pollMs?: number;
  /**
   * Send `data-chamvi-effect` and `data-chamvi-approval` parts, and the approval chunks
   * (`tool-approval-request`, `tool-approval-response`), which come from the same queries.
   * Default `true`.
   */
  readonly progressParts?: boolean;
  /**
   * End the stream with `finish` (finish reason `tool-calls`) once the run waits for approval,
   * every call waiting was sent as `tool-approval-request` and every other call of the step has
   * its output (the progress query's `settled`), as the AI SDK ends a response that asks for
   * approval: `useChat` then sends the answers (`addToolApprovalResponse`) in a new request,
   * whose route decides them and streams the rest (see `chatRoute`). The run goes on waiting.
   * Default `false`: the stream follows the run until its workflow closes.
   */
  readonly endOnApproval?: boolean;
}

/** Default `pollMs` of {@link runUIMessageStream}: the run's status is asked once a second. */
export const DEFAULT_RUN_POLL_MS = 1000;

/**
 * Accepted `pollMs` of {@link runUIMessageStream}: 100 ms (each poll is a describe call and two
 * queries to the Temporal server, per reader) to 2^31 - 1 ms (the longest delay Node's timers accept).
 */
export const RUN_POLL_RANGE = { min: 100, max: MAX_TIMEOUT_MS } as const;

/** How the `errorText` of the `error` chunk begins when the stream could not follow the run (the run may go on). @beta @experimental */
export const RUN_STREAM_STOPPED = 'The run stream stopped: ';

/** The `data-chamvi-cursor` part sent (transient: not kept in the message) after every batch. @beta @experimental */
export type ChamviCursorChunk = { type: 'data-chamvi-cursor'; data: { cursor: number }; transient: true };

/**
 * An agent run as an AI SDK UI message stream, for `createUIMessageStreamResponse({ stream })` or
 * `pipeUIMessageStreamToResponse` (a route `useChat` talks to): `start`, then per model step
 * `start-step`, text / reasoning / tool-input parts as the step streams them, `finish-step`;
 * each call's end as the AI SDK streams it (`tool-output-available` with the output the model
 * was sent, `tool-output-error`, `tool-output-denied`) when the next step starts or the run ends;
 * a call waiting for approval as `tool-approval-request` (approval id
 * `<workflow id>:<tool call id>`, see {@link approvalIdOf}), answered by `tool-approval-response`
 * once decided, so `useChat`'s tool part goes `approval-requested` → `approval-responded` →
 * `output-available` / `output-denied`, on a replay too (a call the approval rule decided: its
 * request `isAutomatic`); effect outcomes (`data-chamvi-effect`, and on the call's output chunk as
 * `providerMetadata.chamvi`, see `effectMetadata`) and pending approvals (`data-chamvi-approval`)
 * as they settle; `finish` when the run completes (`error` when it failed, `abort` when it was
 * cancelled, terminated or timed out). A retried step sends `reset-step` and the new attempt's text.
 *
 * Sub-agents (agent tools), as the AI SDK streams subagents: while the sub-agent run of an open
 * call runs, its own stream is followed and its message so far goes out as the agent tool part's
 * preliminary output (`tool-output-available`, `preliminary: true`, the output a `UIMessage`; at
 * most one per event loop turn); the part's output once the call ends is what the parent's model
 * got (the sub-agent's final text). A call waiting for approval anywhere in the sub-agent's tree
 * is a `tool-approval-request` on that part, approval id `<sub-agent workflow id>:<tool call id>`,
 * with a `reason` and an `approvalDescriptor` ({@link SubAgentApprovalDescriptor}) naming the call;
 * `chatRoute` decides the answer to it. Sub-agents are found by the progress query, so this needs
 * `progressParts` (the default). A sub-agent's own sub-agents show in its message as tool parts
 * with their final output.
 *
 * Across executions (continue-as-new, a workflow retry, a reset) the steps of each follow the
 * last one shown. Which execution is the newer is Temporal's word, not the store's: each run met
 * in the stream is described once (at most 1000 per reader), and a batch of an execution
 * that started before the one shown (a reset's old branch still writing) is dropped.
 *
 * The text comes from the durable stream store, so a reader that connects late or again (a page
 * reload, a worker that crashed mid-step) replays what was shown from the store: nothing lost;
 * with `from`, nothing shown twice. The stream follows the run until its workflow closes. When
 * the run cannot be followed (no such workflow, the Temporal server or the store unreachable),
 * the stream ends with an `error` chunk whose text begins with {@link RUN_STREAM_STOPPED}; it
 * never errors.
 *
 * @throws InvalidOptionError for a `pollMs` that is not a whole number from 100 to 2^31 - 1, before
 * anything is asked.
 * @beta @experimental
 */
export function runUIMessageStream(options: RunUIMessageStreamOptions): ReadableStream<UIMessageChunk> {
  const pollMs = wholeOption('runUIMessageStream', 'pollMs', options.pollMs, DEFAULT_RUN_POLL_MS, RUN_POLL_RANGE);
  const stop = new AbortController();
  const signal = options.signal === undefined ? stop.signal : linkedSignal([options.signal, stop.signal]).signal;
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      // After a cancel the controller is closed: nothing more may be enqueued, closed or errored.
      const open = (): boolean => !stop.signal.aborted;
      follow(options, pollMs, signal, (chunk) => {
        if (open()) controller.enqueue(chunk);
      }).then(
        () => {
          if (open()) controller.close();
        },
        (error: unknown) => {
          // An `error` chunk, not an errored stream: the page gets an error event (else a 200 with an
          // empty body), and a route that does not await pipeUIMessageStreamToResponse is left no
          // unhandled rejection, which ends a Node server (a page asking for a made-up run).
          if (!open()) return;
          const reason = error instanceof Error ? error.message : String(error);
          controller.enqueue({ type: 'error', errorText: `${RUN_STREAM_STOPPED}${reason}` });
          controller.close();
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
  pollMs: number,
  signal: AbortSignal,
  emit: (chunk: UIMessageChunk) => void,
): Promise<void> {
  // Checked before the server is asked anything: a cursor comes from the page.
  const from = options.from === undefined ? undefined : streamCursorOption('runUIMessageStream', options.from);
  // Aborted when the stream ends, however it ends: no Temporal call outlives it.
  const ending = linkedSignal([signal]);
  try {
    const calls = new OpenCalls();
    const send = withEffectMetadata(emit);
    const observed = (chunk: UIMessageChunk) => {
      calls.observe(chunk);
      send(chunk);
    };
    await followRun(options, from, pollMs, ending.signal, observed, calls);
  } finally {
    ending.abort();
  }
}

async function followRun(
  options: RunUIMessageStreamOptions,
  from: number | undefined,
  pollMs: number,
  signal: AbortSignal,
  send: (chunk: UIMessageChunk) => void,
  calls: OpenCalls,
): Promise<void> {
  const { client, workflowId, stream } = options;
  const progress = new RunProgressParts(client, workflowId, signal);
  const withProgress = options.progressParts !== false;
  const { runId, chain, status, description } = await resolveRunId(client, workflowId, progress, options.runId);
  // The run's own stream: another workflow with the run id, or another run of the workflow id, writes elsewhere.
  const key = { runId, workflowId, firstExecutionRunId: chain ?? runId };
  // Which execution is newer is asked of Temporal: a reset's old branch may write after the new one began.
  const starts = new ExecutionStarts(client, workflowId, chain, signal);
  starts.note(description);
  const ui = new RunStreamUIState((toolCallId) => approvalIdOf(workflowId, toolCallId), starts.order);
  // The chain's result is read from its current execution: its first may be one a reset terminated.
  const resultOf = (run: string | undefined) => (): Promise<unknown> => chainResult(client, workflowId, run, signal);
  // Decided approvals are in no batch: known first, so that a replay shows their request and verdict.
  const approvals = new ApprovalView(ui, !withProgress || status === 'COMPLETED');
  const emit = (chunk: UIMessageChunk) => send(approvals.mark(chunk));
  if (withProgress) {
    for (const record of await decidedApprovals(resultOf(description.runId), status, progress))
      approvals.request(record.toolCallId, record.decidedBy === 'policy');
  }
  let cursor = 0;
  if (from !== undefined) {
    // Rebuilt silently up to the cursor, so what follows continues the parts the page has.
    rebuild: while (cursor < from) {
      const batches = await stream.read(key, cursor, Math.min(DEFAULT_STREAM_READ_LIMIT, from - cursor));
      if (batches.length === 0) break;
      await starts.learn(batches);
      for (const batch of batches) {
        // Past a gap (pruned batches) a page's worth overshoots: what follows the cursor is sent, not absorbed.
        if (batch.cursor > from) break rebuild;
        // The page has these parts: the calls they leave open are known (a sub-agent's part is open).
        for (const chunk of ui.batch(batch)) calls.observe(chunk);
        cursor = batch.cursor;
      }
    }
    cursor = from;
  } else {
    emit({ type: 'start', messageId: options.messageId ?? `chamvi-${runId}` });
  }
  progress.runId = runId;
  const watcher = new RunWatcher(
    client,
    workflowId,
    chain,
    description.runId,
    withProgress ? progress : undefined,
    pollMs,
    signal,
  );
  // The calls of the run waiting for approval, as the last poll saw them.
  const waiting = new Set<string>();
  const subAgents = new SubAgentView(client, stream, calls, signal, emit, (part) => ui.requestReplaced(part), pollMs);
  for (;;) {
    if (signal.aborted) return; // the reader stopped; the run goes on
    if (watcher.error !== undefined) throw watcher.error.error;
    const news = watcher.take();
    for (const chunk of news) {
      emit(chunk);
      if (chunk.type !== 'data-chamvi-approval') continue;
      const data = chunk.data as { status?: unknown; workflowId?: unknown };
      if (data.workflowId !== undefined) continue; // a sub-agent's call: shown on its agent tool part
      const id = String(chunk.id);
      if (data.status !== 'pending') {
        waiting.delete(id);
        continue;
      }
      waiting.add(id);
      for (const request of approvals.request(id)) emit(request);
    }
    progress.childrenChanged = false;
    if (news.length > 0 || progress.children.length > 0) {
      subAgents.children(progress.children);
      subAgents.pending(progress.subAgentPending);
    }
    // Read after learning that the run closed: every batch committed before the close is in.
    const closed = watcher.closed;
    const batches = await stream.read(key, cursor);
    await starts.learn(batches);
    for (const request of await approvals.before(batches, progress)) emit(request);
    for (const batch of batches) {
      for (const chunk of ui.batch(batch)) {
        emit(chunk);
        // A reset removes every part of the current step, data parts that arrived during it
        // included: they are sent again (a data part with a known id is replaced, not added).
        if (chunk.type === 'reset-step') for (const again of progress.resend()) emit(again);
      }
      cursor = batch.cursor;
      const marker: ChamviCursorChunk = { type: 'data-chamvi-cursor', data: { cursor }, transient: true };
      emit(marker);
      // The run may end right after a step: look soon.
      if (batch.parts.some((p) => p.type === 'step-end')) watcher.soon();
    }
    if (batches.length > 0) {
      subAgents.flush();
      continue;
    }
    // Ends as the AI SDK ends a step that asks for approval: every other call of the step with its
    // output, so that `sendAutomaticallyWhen` sees the step complete once the page answers.
    let unsettled = false;
    const waitingParts = new Set([...waiting, ...subAgents.waitingParts()]);
    if (options.endOnApproval === true && closed === undefined && waitingParts.size > 0) {
      if ([...waiting].every((id) => ui.isRequested(id)) && subAgents.allRequested()) {
        if (calls.besides(waitingParts).length > 0) {
          const settled = (await progress.progress())?.settled ?? [];
          if (withProgress) for (const chunk of progress.effects(settled.flatMap((c) => c.report ?? []))) emit(chunk);
          for (const chunk of calls.outputs(settled, waitingParts)) emit(chunk);
        }
        unsettled = calls.besides(waitingParts).length > 0;
        if (!unsettled) {
          for (const chunk of ui.endStep()) emit(chunk);
          emit({ type: 'finish', finishReason: 'tool-calls' });
          return;
        }
      }
    }
    if (closed !== undefined) {
      for (const chunk of ui.endStep()) emit(chunk);
      await finishRunStream(
        { status: closed, result: resultOf(watcher.run), progress, withProgress, replaced: watcher.replaced, ui },
        emit,
      );
      return;
    }
    // Linked by hand, not AbortSignal.any: Node may collect a composite signal nothing else holds, and its abort never fires.
    // A call that ends beside a waiting one changes nothing the watcher reports: look again after pollMs.
    const wake = linkedSignal([signal, watcher.signal], unsettled ? pollMs : undefined);
    try {
      await stream.waitForAppend(key, cursor, wake.signal);
    } finally {
      wake.dispose();
    }
  }
}
