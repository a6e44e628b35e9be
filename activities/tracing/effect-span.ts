import type { Span } from '@opentelemetry/api';
import type { EffectEvent } from '../../src/effects/effect-event.js';
import { errorType, loadOpenTelemetry, type OtelApi } from './open-telemetry-api.js';

/** The instrumentation scope of this library's spans. */
export const TRACER_NAME = '@chamvi/temporal';

/** What an effect span knows when its attempt starts. */
export interface EffectSpanStart {
  readonly tool: string;
  readonly toolCallId: string;
  readonly agent: string;
  readonly runId: string;
  readonly attempt: number;
  /** The key the workflow planned, when it did; else the one resolved later ({@link EffectSpan.keyed}). */
  readonly key?: string;
  /** Who decided the call's approval, when it needed one. */
  readonly decidedBy?: string;
}

/** How an attempt ended, as its span says it. */
export type EffectSpanOutcome = 'executed' | 'reconciled' | 'recorded' | 'failed';

/**
 * The span of one attempt of an effect call, `chamvi.effect <tool>`, a child of the activity's
 * span (Temporal's `RunActivity:chamvi.effectCall`). Attributes: `chamvi.effect.tool`, `.key`,
 * `.attempt`, `.fence` (of the claim held, claim stores only) and `.outcome`, plus the GenAI ones
 * of a tool execution (`gen_ai.operation.name` `execute_tool`, `gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, `gen_ai.agent.name`) and `chamvi.run.id`. Events: `claim` (`result`
 * `acquired`, `takeover` with the `fence`, or `busy`), `alreadyApplied` (`found` or `nothing`),
 * `execute` (`phase` `start`, `end`), `record` (`done`, or `pending` when the write failed after
 * the effect). A failed attempt sets the span's status to error with the failure's message and
 * its type (`error.type`, the name in the failure catalogue).
 *
 * {@link run} makes the span the active one, so whatever the tool does (its `fetch`, an undici
 * or HTTP instrumentation's spans) and the attempt's log line (which Temporal's OpenTelemetry
 * interceptor gives `trace_id` and `span_id`) belong to it. The span ends with the attempt: an
 * attempt whose process dies has no span, and each retry has its own.
 *
 * Without `@opentelemetry/api` installed every method does nothing.
 */
export class EffectSpan {
  private constructor(
    private readonly api: OtelApi | undefined,
    private readonly span: Span | undefined,
  ) {}

  /** Starts the span of an attempt (after loading the OpenTelemetry API once per process). */
  static async start(start: EffectSpanStart): Promise<EffectSpan> {
    const api = await loadOpenTelemetry();
    if (api === undefined) return new EffectSpan(undefined, undefined);
    const span = api.trace.getTracer(TRACER_NAME).startSpan(`chamvi.effect ${start.tool}`, {
      kind: api.SpanKind.INTERNAL,
      attributes: {
        'chamvi.effect.tool': start.tool,
        'chamvi.effect.attempt': start.attempt,
        ...(start.key !== undefined ? { 'chamvi.effect.key': start.key } : {}),
        ...(start.decidedBy !== undefined ? { 'chamvi.approval.decided_by': start.decidedBy } : {}),
        'chamvi.run.id': start.runId,
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': start.tool,
        'gen_ai.tool.call.id': start.toolCallId,
        'gen_ai.tool.type': 'function',
        'gen_ai.agent.name': start.agent,
      },
    });
    return new EffectSpan(api, span);
  }

  /** Runs `body` with this span active. */
  run<T>(body: () => Promise<T>): Promise<T> {
    if (this.api === undefined || this.span === undefined) return body();
    return this.api.context.with(this.api.trace.setSpan(this.api.context.active(), this.span), body);
  }

  /** Sets the key once it is resolved (a call the workflow did not plan). */
  keyed(key: string): void {
    this.span?.setAttribute('chamvi.effect.key', key);
  }

  /** Records a step of the protocol as an event (the observer of `EffectEnv.observe`). */
  readonly observe = (event: EffectEvent): void => {
    const span = this.span;
    if (span === undefined) return;
    switch (event.type) {
      case 'claim':
        if (event.result === 'busy') span.addEvent('claim', { result: 'busy' });
        else {
          span.addEvent('claim', { result: event.result, fence: event.fence });
          span.setAttribute('chamvi.effect.fence', event.fence);
        }
        break;
      case 'alreadyApplied':
        span.addEvent('alreadyApplied', { result: event.result });
        break;
      case 'execute':
        span.addEvent(
          'execute',
          event.phase === 'end' && event.error !== undefined
            ? { phase: 'end', 'error.type': errorType(event.error) }
            : { phase: event.phase },
        );
        break;
      case 'record':
        span.addEvent('record', { result: event.result });
        break;
    }
  };

  /** Ends the span with the attempt's outcome (and its failure). */
  end(outcome: EffectSpanOutcome, error?: unknown): void {
    const { api, span } = this;
    if (api === undefined || span === undefined) return;
    span.setAttribute('chamvi.effect.outcome', outcome);
    if (outcome === 'failed') {
      const message = error instanceof Error ? error.message : String(error);
      span.setAttribute('error.type', errorType(error));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message });
    } else {
      span.setStatus({ code: api.SpanStatusCode.OK });
    }
    span.end();
  }
}
