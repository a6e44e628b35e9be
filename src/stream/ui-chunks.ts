import type { UIMessageChunk } from 'ai';
import type { RunStreamBatch, RunStreamPart } from './run-stream-store.js';
import { toolOutputChunks } from './tool-output-chunks.js';
import type { ToolResultPart } from './tool-result-parts.js';

/**
 * Where an execution (a Temporal run id, the `execution` of a batch) stands in its workflow's
 * chain: a larger number for an execution that Temporal started later, `undefined` for one it
 * does not know as the chain's. `runUIMessageStream` uses each run's start time as `describe`
 * reports it (for a reset's new execution: the time of the reset, later than every attempt the old
 * branch was given), so the order is Temporal's, never the stream store's.
 */
export type RunExecutionOrder = (execution: string) => number | undefined;

/**
 * Turns a run's stream batches into AI SDK UI message chunks, in order, one model step after the
 * other (`start-step` ... `finish-step`). Part ids are unique per step attempt
 * (`<step>.<attempt>.<id>`, prefixed with the execution after a reset), so a page never merges
 * two attempts' text.
 *
 * A retried step: the first batch of a newer attempt of the step being shown emits `reset-step`,
 * which AI SDK's UI message reader answers by removing every part of the current step; the
 * newer attempt's text follows. So a retried step's partial text is replaced, never appended.
 * Batches of an attempt already replaced (a zombie that still writes), of steps already passed
 * and of executions already passed (a zombie of the execution before a continue-as-new or reset)
 * are dropped.
 *
 * Executions: with an `executionOrder` (what `runUIMessageStream` passes: each run's start
 * time as Temporal reports it), a batch of another execution than the one shown is shown only when
 * that execution is not older; an older one's batches (a reset's old branch, whose attempt writes
 * on after the new execution began) are dropped for good, whichever of the two wrote first.
 * Without one, or between two executions it does not know, the execution met later is taken for
 * the newer.
 *
 * Tool calls end as the AI SDK ends them: a `tool-result` becomes `tool-output-available`,
 * `tool-output-error` or (denied) `tool-output-denied`, preceded, for a call that needed approval,
 * by `tool-approval-request` and `tool-approval-response`, so the part passes through
 * `approval-requested` and `approval-responded` on a replay too. Results and approval requests
 * of calls this state never saw (no `tool-input-available` yet) wait for the call: AI SDK's reader
 * fails on a chunk for an unknown call.
 */
export class RunStreamUIState {
  /** Calls shown (`tool-input-available` sent), across steps. */
  private readonly calls = new Set<string>();
  /** Calls that asked for approval: their approval id. */
  private readonly approvals = new Map<string, string>();
  /** Approval requests sent by this state. */
  private readonly requested = new Set<string>();
  /** Approval requests of calls not shown yet. */
  private readonly waiting = new Set<string>();

  /**
   * @param approvalId the approval id of a call (stable across readers: a page's answer to a
   *   replayed request must name the same id). Default: the tool call id.
   * @param executionOrder where each execution of the chain stands (see {@link RunExecutionOrder}),
   *   asked for the execution of every batch that is not the one shown. Default: none, the
   *   execution met later is taken for the newer.
   */
  constructor(
    private readonly approvalId: (toolCallId: string) => string = (id) => id,
    private readonly executionOrder?: RunExecutionOrder,
  ) {}

  /**
   * A call asked for approval: `tool-approval-request` now when the call is shown, else once it
   * is; again after a retried step replaced it. Also for a call already decided (its result then
   * follows the request and the response).
   */
  approvalRequested(toolCallId: string): UIMessageChunk[] {
    const first = !this.approvals.has(toolCallId);
    this.approvals.set(toolCallId, this.approvalId(toolCallId));
    if (!this.calls.has(toolCallId)) {
      this.waiting.add(toolCallId);
      return [];
    }
    return first || !this.requested.has(toolCallId) ? this.request(toolCallId) : [];
  }

  /**
   * Another approval request was sent on the part of `toolCallId` (a sub-agent's call, shown on its
   * agent tool part): the part's approval is that one now, so the call's own request, if it had
   * one, goes again before its response.
   */
  requestReplaced(toolCallId: string): void {
    this.requested.delete(toolCallId);
  }

  /** Whether this state sent the approval request of `toolCallId` (since its call was last shown). */
  isRequested(toolCallId: string): boolean {
    return this.requested.has(toolCallId);
  }

  /** The end of calls whose results came from elsewhere than the stream (the run's output). */
  toolResults(parts: readonly ToolResultPart[]): UIMessageChunk[] {
    return parts.flatMap((part) => this.toolResult(part));
  }
  private step: number | undefined;
  private execution: string | undefined;
  private attempt = 0;
  private stepOpen = false;
  /** Executions the view moved past or found older than the one shown: what they still write comes from zombie attempts. */
  private readonly passed = new Set<string>();
  private readonly openText = new Set<string>();
  private readonly openReasoning = new Set<string>();
  private readonly openTools = new Set<string>();

  /** The chunks of `batch` (none when it is superseded). */
  batch(batch: RunStreamBatch): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    const sameExecution = batch.execution === this.execution;
    // An activity of an earlier execution may outlive it (a timed-out attempt beside its retry,
    // then continue-as-new or a reset): its batches must not open a step between the new ones.
    if (this.passed.has(batch.execution)) return out;
    if (this.execution !== undefined && !sameExecution && !this.notOlder(batch.execution, this.execution)) {
      // A reset's old branch that began writing after the new execution did: what it writes is never shown.
      this.passed.add(batch.execution);
      return out;
    }
    if (this.step === undefined || !sameExecution || batch.step > this.step) {
      if (this.execution !== undefined && !sameExecution) this.passed.add(this.execution);
      // A new step (or a reset's new execution, shown as a new step after what was shown).
      out.push(...this.endStep(), { type: 'start-step' });
      this.begin(batch);
    } else if (batch.step < this.step || batch.attempt < this.attempt) {
      return out; // a late writer of a step or attempt already replaced
    } else if (batch.attempt > this.attempt) {
      // A retry: the earlier attempt's partial text goes (AI SDK removes the current step's parts).
      out.push({ type: 'reset-step' });
      this.openText.clear();
      this.openReasoning.clear();
      this.openTools.clear();
      this.begin(batch);
    }
    const prefix = this.prefix(batch);
    for (const part of batch.parts) out.push(...this.part(prefix, part));
    return out;
  }

  /** Closes the step being shown (its open parts, then `finish-step`); nothing when none is. */
  endStep(): UIMessageChunk[] {
    if (!this.stepOpen) return [];
    const out: UIMessageChunk[] = [];
    for (const id of this.openText) out.push({ type: 'text-end', id });
    for (const id of this.openReasoning) out.push({ type: 'reasoning-end', id });
    this.openText.clear();
    this.openReasoning.clear();
    this.openTools.clear();
    this.stepOpen = false;
    out.push({ type: 'finish-step' });
    return out;
  }

  /** Whether a step is being shown (started and not ended). */
  get inStep(): boolean {
    return this.stepOpen;
  }

  /** Whether `execution` is not older than `shown`; unknown to the order: older than any it knows. */
  private notOlder(execution: string, shown: string): boolean {
    const order = this.executionOrder;
    if (order === undefined) return true;
    return (order(execution) ?? Number.NEGATIVE_INFINITY) >= (order(shown) ?? Number.NEGATIVE_INFINITY);
  }

  private begin(batch: RunStreamBatch): void {
    this.step = batch.step;
    this.attempt = batch.attempt;
    this.execution = batch.execution;
    this.stepOpen = true;
  }

  private prefix(batch: RunStreamBatch): string {
    return `${batch.execution.slice(0, 8)}.${batch.step}.${batch.attempt}.`;
  }

  private part(prefix: string, part: RunStreamPart): UIMessageChunk[] {
    if (!this.stepOpen) return []; // after this attempt's step-end: nothing more belongs to it
    switch (part.type) {
      case 'text-delta': {
        const id = prefix + part.id;
        const start: UIMessageChunk[] = this.openText.has(id) ? [] : [{ type: 'text-start', id }];
        this.openText.add(id);
        return [...start, { type: 'text-delta', id, delta: part.delta }];
      }
      case 'reasoning-delta': {
        const id = prefix + part.id;
        const start: UIMessageChunk[] = this.openReasoning.has(id) ? [] : [{ type: 'reasoning-start', id }];
        this.openReasoning.add(id);
        return [...start, { type: 'reasoning-delta', id, delta: part.delta }];
      }
      case 'tool-input-start':
        this.openTools.add(part.toolCallId);
        return [{ type: 'tool-input-start', toolCallId: part.toolCallId, toolName: part.toolName }];
      case 'tool-input-delta':
        // A delta of a call whose start this reader never saw would fail AI SDK's reader: skipped.
        if (!this.openTools.has(part.toolCallId)) return [];
        return [{ type: 'tool-input-delta', toolCallId: part.toolCallId, inputTextDelta: part.delta }];
      case 'tool-call': {
        this.calls.add(part.toolCallId);
        this.requested.delete(part.toolCallId);
        const input: UIMessageChunk[] = [
          { type: 'tool-input-available', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input },
        ];
        if (!this.waiting.delete(part.toolCallId)) return input;
        return [...input, ...this.request(part.toolCallId)];
      }
      case 'tool-result':
        return this.toolResult(part);
      case 'step-end':
        return this.endStep();
      default:
        return []; // a part of a later version
    }
  }

  private request(toolCallId: string): UIMessageChunk[] {
    this.requested.add(toolCallId);
    return [{ type: 'tool-approval-request', approvalId: this.approvalId(toolCallId), toolCallId }];
  }

  private toolResult(part: ToolResultPart): UIMessageChunk[] {
    if (!this.calls.has(part.toolCallId)) return [];
    const denied = isDenied(part.output);
    const approvalId = this.approvals.get(part.toolCallId) ?? (denied ? this.approvalId(part.toolCallId) : undefined);
    if (approvalId === undefined) return toolOutputChunks(part);
    // A denied call ran nothing: approved is what its output says. An approved one ran.
    const reason = denied ? (part.output as { reason?: unknown }).reason : undefined;
    const response: UIMessageChunk = {
      type: 'tool-approval-response',
      approvalId,
      approved: !denied,
      ...(typeof reason === 'string' ? { reason } : {}),
    };
    const request = this.requested.has(part.toolCallId) ? [] : this.request(part.toolCallId);
    return [...request, response, ...toolOutputChunks(part)];
  }
}

function isDenied(output: unknown): boolean {
  return typeof output === 'object' && output !== null && (output as { type?: unknown }).type === 'execution-denied';
}
