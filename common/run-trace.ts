// How a run's trace crosses from the model steps (where the AI SDK's telemetry integrations are)
// to the workflow (which alone knows the whole run) and back to the worker (a sink, called once,
// never on replay). Plain JSON: workflow code and the activities import it.
import type { ApprovalRecord } from './approval-types.js';

/**
 * The tracing identity of a run for one AI SDK telemetry integration that supports durable runs
 * (the `@ai-sdk/otel` `OpenTelemetry` integration with `durable` set): its position among the
 * integrations the agent's model calls report to, and the AI SDK's `DurableTelemetryContext` it
 * captured (trace id, the run span's id, sampling), which the workflow keeps as it is.
 * @public
 */
export interface RunTraceContext {
  /** Position of the integration among those the agent's model calls report to. */
  readonly integration: number;
  /** The integration's `DurableTelemetryContext` (JSON). */
  readonly context: Readonly<Record<string, unknown>>;
}

/** When one model step of a run began and ended (its tool calls included), in ms since the epoch (workflow time). @public */
export interface RunTraceStep {
  /** 0-based, as `ModelStepInput.step`. */
  readonly step: number;
  /** When the step began. */
  readonly startedAt: number;
  /** When the step ended, tool calls included; absent while it runs. */
  readonly endedAt?: number;
}

/** What a traced run keeps about itself between steps, and across continue-as-new. @public */
export interface RunTrace {
  /** The run's identity per durable integration, as its first model step captured it. */
  readonly contexts: readonly RunTraceContext[];
  /** When the run began (its first execution's first step), in ms since the epoch. */
  readonly startedAt: number;
  /** The steps done so far, in order. */
  readonly steps: readonly RunTraceStep[];
}

/** One step of a finished run, as the run's report tells it. */
export interface RunTraceReportStep extends RunTraceStep {
  readonly text?: string;
  readonly finishReason?: string;
  readonly toolCalls?: ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string }>;
}

/** How a run ended, for the worker to report its agent-run and step spans. */
export interface RunTraceReport {
  readonly agent: string;
  readonly runId: string;
  readonly contexts: readonly RunTraceContext[];
  readonly startedAt: number;
  readonly endedAt: number;
  readonly steps: readonly RunTraceReportStep[];
  readonly outcome: 'completed' | 'failed' | 'cancelled';
  /** The model's final text (outcome `completed`). */
  readonly text?: string;
  /** Why the run failed (outcome `failed`). */
  readonly error?: { readonly type: string; readonly message: string };
}

/** An approval decision of a traced run, for the worker to report as a span of the run. */
export interface ApprovalTraceReport {
  readonly agent: string;
  readonly runId: string;
  readonly contexts: readonly RunTraceContext[];
  readonly step: number;
  readonly approval: ApprovalRecord;
}

/**
 * The worker's sink for run traces (`proxySinks<RunTraceSinks>()`); the chamvi plugin registers it,
 * not to be called during replay, so a replayed run reports nothing again.
 */
// A type, not an interface: `proxySinks` wants a record of sinks, which an interface is not.
export type RunTraceSinks = {
  chamviTrace: {
    runEnded(report: RunTraceReport): void;
    approvalDecided(report: ApprovalTraceReport): void;
  };
};
