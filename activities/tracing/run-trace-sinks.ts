import type { InjectedSinks } from '@temporalio/worker';
import type { DurableTelemetryContext, Telemetry, TelemetryOptions } from 'ai';
import type { AgentEntry } from '../agent-registry.js';
import type { RunTraceReport, RunTraceReportStep, RunTraceSinks } from '../../common/run-trace.js';
import { reportApproval } from './approval-span.js';
import { integrationsFor, runTraceCallId } from './step-telemetry.js';

type Event = Record<string, unknown>;

/**
 * The worker's `chamviTrace` sink, which the agent workflow calls when a traced run ends and when
 * one of its approvals is decided. Temporal calls it after the workflow task that made the call,
 * never while a workflow replays (`callDuringReplay: false`): a run replayed after a worker
 * restart or a cache eviction reports nothing twice. (A worker that dies after the sink ran and
 * before it completed that workflow task leaves the task to another worker, which reports again:
 * the same window Temporal's own workflow spans have.)
 */
export function runTraceSinks(agents: readonly AgentEntry[]): InjectedSinks<RunTraceSinks> {
  const telemetry = new Map<string, TelemetryOptions | undefined>(
    agents.map((entry) => {
      const agent = 'agent' in entry ? entry.agent : entry;
      return [agent.name, agent.telemetry];
    }),
  );
  return {
    chamviTrace: {
      runEnded: {
        fn: (info, report) =>
          reportRun(runTraceCallId(info.workflowId, report.runId), report, telemetry.get(report.agent)),
        callDuringReplay: false,
      },
      approvalDecided: { fn: (_info, report) => reportApproval(report), callDuringReplay: false },
    },
  };
}

/**
 * Reports a run to each integration that captured its identity, as the AI SDK's durable protocol
 * has it (`phase: 'replay'`): the run's start, each step's start and end, and the run's end, with
 * the times the workflow recorded. The integration makes the `invoke_agent` span and its `step N`
 * spans with the ids the model calls were reported under. Token usage is not known here (the
 * model-call spans have it), so the run and step spans carry none.
 */
async function reportRun(
  callId: string,
  report: RunTraceReport,
  telemetry: TelemetryOptions | undefined,
): Promise<void> {
  const integrations = integrationsFor(telemetry);
  const settings = {
    functionId: telemetry?.functionId ?? report.agent,
    recordInputs: telemetry?.recordInputs,
    recordOutputs: telemetry?.recordOutputs,
  };
  for (const { integration: index, context } of report.contexts) {
    const integration = integrations[index];
    // The worker's integrations are not the ones the run began with: nothing to report to.
    if (integration?.experimental_durable === undefined) continue;
    const run = context as unknown as DurableTelemetryContext;
    const common = { ...settings, callId, ...modelOf(run) };
    const send = (key: keyof Telemetry, event: Event) => deliver(integration, key, { ...common, ...event });
    await send('onStart', {
      operationId: 'ai.generateText',
      messages: [],
      durableContext: { run, phase: 'replay' },
      timestamp: report.startedAt,
    });
    const done: Event[] = [];
    for (const step of report.steps) {
      const durableContext = { run, stepNumber: step.step, phase: 'replay' };
      await send('onStepStart', {
        stepNumber: step.step,
        steps: [...done],
        messages: [],
        durableContext,
        timestamp: step.startedAt,
      });
      // The step the run ended in: a failure ends it with the failure; a cancellation (below) ends it as aborted.
      if (step.finishReason === undefined) {
        if (report.outcome === 'failed') {
          await send('onStepError', { stepNumber: step.step, error: failure(report), timestamp: step.endedAt });
        }
        continue;
      }
      const result = stepResult(step, settings.recordOutputs !== false, common);
      await send('onStepEnd', { ...result, durableContext, timestamp: step.endedAt });
      done.push(result);
    }
    if (report.outcome === 'completed') {
      const text = settings.recordOutputs === false ? '' : (report.text ?? '');
      const last = done.at(-1);
      await send('onEnd', {
        text,
        finishReason: last?.['finishReason'] ?? 'stop',
        usage: NO_USAGE,
        totalUsage: NO_USAGE,
        content: text === '' ? [] : [{ type: 'text', text }],
        toolCalls: [],
        toolResults: [],
        files: [],
        finalStep: last ?? {},
        steps: done,
        timestamp: report.endedAt,
      });
    } else if (report.outcome === 'cancelled') {
      await send('onAbort', { steps: done, timestamp: report.endedAt });
    } else {
      await send('onError', { error: failure(report), timestamp: report.endedAt });
    }
  }
}

const NO_USAGE = {
  inputTokens: undefined,
  outputTokens: undefined,
  totalTokens: undefined,
  inputTokenDetails: {},
  outputTokenDetails: {},
};

/** What the run's report knows of a step, in the shape of the AI SDK's step result. */
function stepResult(step: RunTraceReportStep, outputs: boolean, common: Event): Event {
  const text = outputs ? (step.text ?? '') : '';
  const toolCalls = (step.toolCalls ?? []).map((c) => ({ type: 'tool-call', ...c, input: undefined }));
  return {
    ...common,
    stepNumber: step.step,
    finishReason: step.finishReason,
    text,
    content: [...(text === '' ? [] : [{ type: 'text', text }]), ...toolCalls],
    toolCalls,
    toolResults: [],
    usage: NO_USAGE,
  };
}

/** The provider and model the run began with, as the integration put them on the run's span. */
function modelOf(run: DurableTelemetryContext): { provider: string; modelId: string } {
  const attributes = run.rootAttributes ?? {};
  const text = (name: string): string => {
    const value = attributes[name];
    return typeof value === 'string' ? value : 'unknown';
  };
  return { provider: text('gen_ai.provider.name'), modelId: text('gen_ai.request.model') };
}

/** The run's failure as an error (its name is the failure's type), or an abort. */
function failure(report: RunTraceReport): Error {
  const error = new Error(
    report.error?.message ?? `The run ${report.outcome === 'cancelled' ? 'was cancelled' : 'failed'}.`,
  );
  error.name = report.error?.type ?? (report.outcome === 'cancelled' ? 'AbortError' : 'Error');
  return error;
}

/** Calls one callback of an integration; an integration that throws does not stop the others. */
async function deliver(integration: Telemetry, key: keyof Telemetry, event: Event): Promise<void> {
  const callback = (integration as unknown as Record<string, ((event: Event) => unknown) | undefined>)[key];
  try {
    await callback?.call(integration, event);
  } catch {
    // As the AI SDK treats its integrations: their failures are theirs.
  }
}
