import { Context } from '@temporalio/activity';

/**
 * The metrics the effect-call activity records through Temporal's metric meter
 * (`Context.current().metricMeter`), so they reach whatever the worker's Temporal runtime exports
 * to (Prometheus, an OpenTelemetry collector), tagged like Temporal's own activity metrics
 * (namespace, task queue, activity type) plus the labels below.
 * @public
 */
export const EFFECT_METRICS = {
  /** Counter, labels `tool`, `outcome` (`executed`, `reconciled`, `recorded`, `failed`): one per attempt that ended. */
  calls: 'chamvi_effect_calls',
  /** Histogram in ms, labels `tool`, `outcome`: how long each attempt of an effect call took. */
  latency: 'chamvi_effect_call_latency',
  /** Counter, label `tool`: record writes that failed after the effect and were handed to `chamvi.recordEffect` to retry. */
  recordRetries: 'chamvi_effect_record_retries',
  /** Counter, label `tool`: calls that found their key busy (another attempt's live claim, or an identical call in flight) and waited. */
  busyWaits: 'chamvi_effect_busy_waits',
} as const;

/** How one attempt of an effect call ended, as it is logged and counted. */
export interface EffectCallObservation {
  readonly tool: string;
  readonly key: string | undefined;
  readonly outcome: 'executed' | 'reconciled' | 'recorded' | 'failed';
  readonly attempt: number;
  readonly durationMs: number;
  /** The failure (outcome `failed`). */
  readonly error?: unknown;
}

/**
 * Logs one line for an attempt of an effect call through the activity logger (so it carries the
 * workflow and activity ids Temporal attaches), `info` when it answered and `warn` when it failed,
 * and counts it in {@link EFFECT_METRICS}.
 */
export function observeEffectCall(observation: EffectCallObservation): void {
  const context = Context.current();
  const { tool, key, outcome, attempt, durationMs } = observation;
  const meta = { tool, key, outcome, attempt, durationMs };
  if (outcome === 'failed') {
    const error = observation.error instanceof Error ? observation.error.message : String(observation.error);
    context.log.warn(`effect ${tool} failed on attempt ${attempt} after ${durationMs} ms: ${error}`, {
      ...meta,
      error,
    });
  } else {
    context.log.info(`effect ${tool} ${outcome} on attempt ${attempt} in ${durationMs} ms`, meta);
  }
  const meter = context.metricMeter;
  meter
    .createCounter(EFFECT_METRICS.calls, '1', 'Effect-tool calls (one per attempt that ended), by tool and outcome.')
    .add(1, { tool, outcome });
  meter
    .createHistogram(EFFECT_METRICS.latency, 'int', 'ms', 'Duration of each attempt of an effect-tool call.')
    .record(Math.max(0, Math.round(durationMs)), { tool, outcome });
}

/** Counts a record write that failed after the effect and is retried by the record activity. */
export function countRecordRetry(tool: string): void {
  Context.current()
    .metricMeter.createCounter(
      EFFECT_METRICS.recordRetries,
      '1',
      'Effect records whose write failed after the effect and were handed to the record activity to retry.',
    )
    .add(1, { tool });
}

/** Counts a call that found its effect key busy and waited. */
export function countBusyWait(tool: string): void {
  Context.current()
    .metricMeter.createCounter(
      EFFECT_METRICS.busyWaits,
      '1',
      'Effect calls that found their key held by another attempt (or an identical call in flight) and waited.',
    )
    .add(1, { tool });
}
