import { isCancellation, proxySinks } from '@temporalio/workflow';
import type {
  ApprovalRecord,
  ModelStepResult,
  RunRef,
  RunTrace,
  RunTraceSinks,
  RunTraceStep,
} from '../common/index.js';
import type { StepSummary } from './agent-loop.js';

const { chamviTrace } = proxySinks<RunTraceSinks>();

/**
 * What a run knows of its own trace, in workflow code: the tracing identity its first model step
 * captured (none without an AI SDK integration that reports durable runs: then it does nothing),
 * and when each step began and ended, by workflow time. It reports through the worker's sink
 * (`chamviTrace`), which Temporal does not call while a workflow replays: a run replayed on another
 * worker, or after its cache entry was evicted, reports nothing twice. A decided approval is
 * reported at once, the run itself when it ends (completed, failed or cancelled, not when it
 * continues as new: the next execution carries the trace on).
 */
export class RunTracer {
  private trace: RunTrace | undefined;
  private readonly startedAt: number;
  private readonly steps: RunTraceStep[];
  private current: { step: number; startedAt: number } | undefined;

  constructor(
    private readonly run: RunRef,
    carried: RunTrace | undefined,
  ) {
    this.trace = carried;
    this.startedAt = carried?.startedAt ?? Date.now();
    this.steps = [...(carried?.steps ?? [])];
  }

  /** Whether the next model step should capture the run's tracing identity (the run has none yet). */
  get capturing(): boolean {
    return this.trace === undefined;
  }

  stepStarted(step: number): void {
    this.current = { step, startedAt: Date.now() };
  }

  /** Takes the tracing identity from the step that captured it; a step a stop condition skipped is no step. */
  stepAnswered(result: ModelStepResult): void {
    if (this.trace === undefined && result.trace !== undefined && result.trace.length > 0) {
      this.trace = { contexts: result.trace, startedAt: this.startedAt, steps: this.steps };
    }
    if (result.stopped === true) this.current = undefined;
  }

  /** The step and its tool calls are done. */
  stepEnded(): void {
    if (this.current === undefined) return;
    this.steps.push({ ...this.current, endedAt: Date.now() });
    this.current = undefined;
  }

  approvalDecided(approval: ApprovalRecord, step: number): void {
    const { trace } = this;
    if (trace === undefined) return;
    chamviTrace.approvalDecided({
      agent: this.run.agent,
      runId: this.run.runId,
      contexts: trace.contexts,
      step,
      approval,
    });
  }

  /** What continue-as-new carries (absent when the run is not traced). */
  snapshot(): RunTrace | undefined {
    return this.trace === undefined ? undefined : { ...this.trace, steps: [...this.steps] };
  }

  /** Reports the run: how it ended, each step with what the run's summary says of it. */
  ended(summaries: readonly StepSummary[], end: { text: string } | { error: unknown }): void {
    const { trace } = this;
    if (trace === undefined) return;
    const endedAt = Date.now();
    const byStep = new Map(summaries.map((s) => [s.step, s]));
    const steps = [...this.steps, ...(this.current !== undefined ? [{ ...this.current, endedAt }] : [])].map((s) => {
      const summary = byStep.get(s.step);
      return summary === undefined
        ? s
        : { ...s, text: summary.text, finishReason: summary.finishReason, toolCalls: summary.toolCalls };
    });
    const outcome = 'text' in end ? 'completed' : isCancellation(end.error) ? 'cancelled' : 'failed';
    chamviTrace.runEnded({
      agent: this.run.agent,
      runId: this.run.runId,
      contexts: trace.contexts,
      startedAt: trace.startedAt,
      endedAt,
      steps,
      outcome,
      ...('text' in end ? { text: end.text } : {}),
      ...(outcome === 'failed' && 'error' in end ? { error: failureOf(end.error) } : {}),
    });
  }
}

/** A failure's type and message, as a span reports them: the first failure in the chain with a type (the activity's own). */
function failureOf(error: unknown): { type: string; message: string } {
  let inner = error;
  for (;;) {
    const type = (inner as { type?: unknown }).type;
    if (typeof type === 'string' && type !== '' && inner instanceof Error) return { type, message: inner.message };
    if (!(inner instanceof Error) || !(inner.cause instanceof Error)) break;
    inner = inner.cause;
  }
  return inner instanceof Error
    ? { type: inner.name, message: inner.message }
    : { type: 'Error', message: String(inner) };
}
