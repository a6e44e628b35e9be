import type { DurableTelemetryContext, Telemetry, TelemetryOptions } from 'ai';
import type { RunTraceContext } from '../../common/run-trace.js';

type TelemetryEvent = Readonly<Record<string, unknown>> & { readonly callId?: string };
type Callback = (event: TelemetryEvent) => unknown;
type Wrapper = (options: TelemetryEvent & { execute: () => PromiseLike<unknown> }) => PromiseLike<unknown>;

/** The callbacks a model step's `generateText` or `streamText` makes, with the older names some integrations use. */
const CALLBACKS: ReadonlyArray<readonly [keyof Telemetry, keyof Telemetry | undefined]> = [
  ['onStart', undefined],
  ['onStepStart', undefined],
  ['onLanguageModelCallStart', undefined],
  ['onLanguageModelCallEnd', undefined],
  ['onToolExecutionStart', undefined],
  ['onToolExecutionEnd', undefined],
  ['onStepEnd', 'onStepFinish'],
  ['onStepError', undefined],
  ['onEnd', undefined],
  ['onAbort', undefined],
  ['onError', undefined],
];

/** What a durable run's model call reports live: the model call itself, and how it failed. */
const LIVE: ReadonlySet<keyof Telemetry> = new Set([
  'onLanguageModelCallStart',
  'onLanguageModelCallEnd',
  'onAbort',
  'onError',
]);

/**
 * The integrations the agent's model calls report to, as the AI SDK picks them: the agent's own
 * (`telemetry.integrations`), else those registered with `registerTelemetry` in this process.
 */
export function integrationsFor(telemetry: TelemetryOptions | undefined): Telemetry[] {
  if (telemetry?.isEnabled === false) return [];
  const own = telemetry?.integrations;
  if (own !== undefined && own !== null) return Array.isArray(own) ? own : [own];
  return [...(globalThis.AI_SDK_TELEMETRY_INTEGRATIONS ?? [])];
}

/**
 * The AI SDK telemetry call id of a whole run: the same in every model step and in the run's
 * report, so the step spans the report makes are the parents the model calls were reported under.
 */
export function runTraceCallId(workflowId: string, runId: string): string {
  return `chamvi:${workflowId}:${runId}`;
}

/** One model step's telemetry: the settings its call gets, and the run identities it captured. */
export interface StepTelemetry {
  /** The call's `telemetry` (the agent's, reporting through the step's integration). */
  readonly telemetry: TelemetryOptions | undefined;
  /** The run's tracing identity per durable integration, once the call began (empty without one). */
  captured(): RunTraceContext[];
}

/**
 * The telemetry of one model step of a run. Each step is one AI SDK call, which on its own would
 * report itself as a whole agent invocation (`invoke_agent` with one `step 1`): N steps, N
 * one-step runs. An integration that supports durable runs (`experimental_durable`: the
 * `@ai-sdk/otel` `OpenTelemetry` integration with `durable` set) is told the step instead, as the
 * AI SDK's durable protocol has it: only the model call is reported live (`chat <model>`, under
 * the span of step `step` of the run, whose id derives from the run's call id), and the run's
 * `invoke_agent` span and its step spans are reported once, when the run ends (the workflow's
 * report, see `run-trace-sinks.ts`), with their recorded times. The run's identity is captured
 * from the call's start, in the context of the model step's activity span: the run is in the
 * workflow's trace. The span of the agent run has no parent there (it is not part of any one
 * activity), and is a root of that trace beside Temporal's workflow span.
 *
 * Other integrations get every event as they would without this library (each step its own
 * invocation). `functionId` defaults to the agent's name, so `gen_ai.agent.name` names the agent.
 */
export function stepTelemetry(
  agentName: string,
  telemetry: TelemetryOptions | undefined,
  run: { readonly callId: string; readonly step: number },
): StepTelemetry {
  const integrations = integrationsFor(telemetry);
  if (integrations.length === 0) return { telemetry, captured: () => [] };
  const contexts = new Map<number, DurableTelemetryContext>();
  const live = (i: number, event: TelemetryEvent): TelemetryEvent => {
    const context = contexts.get(i);
    return context === undefined
      ? event
      : { ...event, callId: run.callId, durableContext: { run: context, stepNumber: run.step, phase: 'live' } };
  };
  const forward = async (key: keyof Telemetry, older: keyof Telemetry | undefined, event: TelemetryEvent) => {
    if (key === 'onStart') await capture(event);
    await Promise.allSettled(
      integrations.map(async (integration, i) => {
        if (contexts.has(i) && !LIVE.has(key)) return;
        const target = integration as unknown as Record<string, Callback | undefined>;
        const callback = target[key] ?? (older === undefined ? undefined : target[older]);
        await callback?.call(integration, live(i, event));
      }),
    );
  };
  const capture = async (event: TelemetryEvent): Promise<void> => {
    await Promise.allSettled(
      integrations.map(async (integration, i) => {
        const durable = integration.experimental_durable;
        if (durable === undefined) return;
        const start = { ...event, callId: run.callId } as Parameters<typeof durable.captureContext>[0];
        const context = await durable.captureContext(start);
        // Of the agent run, not of this step's activity: the run span's parent would be the activity's span.
        if (context !== undefined) contexts.set(i, { ...context, parentSpanContext: undefined });
      }),
    );
  };
  const step: Record<string, unknown> = {};
  for (const [key, older] of CALLBACKS) step[key] = (event: TelemetryEvent) => forward(key, older, event);
  // Provider requests run inside each integration's context: their HTTP spans nest under the model call.
  const wrap =
    (key: 'executeLanguageModelCall' | 'executeTool'): Wrapper =>
    ({ execute, ...event }) => {
      let wrapped = execute;
      integrations.forEach((integration, i) => {
        const wrapper = (integration as unknown as Record<string, Wrapper | undefined>)[key];
        if (wrapper === undefined) return;
        const inner = wrapped;
        wrapped = () => wrapper.call(integration, { ...live(i, event), execute: inner });
      });
      return wrapped();
    };
  step['executeLanguageModelCall'] = wrap('executeLanguageModelCall');
  step['executeTool'] = wrap('executeTool');
  return {
    telemetry: { functionId: agentName, ...telemetry, integrations: [step] },
    captured: () => [...contexts].map(([integration, context]) => ({ integration, context: { ...context } })),
  };
}
