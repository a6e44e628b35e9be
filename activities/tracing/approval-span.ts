import type { DurableTelemetryContext } from 'ai';
import type { ApprovalTraceReport } from '../../common/run-trace.js';
import { TRACER_NAME } from './effect-span.js';
import { loadOpenTelemetry } from './open-telemetry-api.js';

/**
 * An approval decision as a span of the run, `chamvi.approval <tool>`, under the run's
 * `invoke_agent` span: from the request to the decision, with events `requested` and `decided`
 * (`timed out` when nobody decided in time), who decided (`approver`, `timeout`, `policy`; the
 * approver's name when the token had one), and whether the call was approved; a denied effect
 * call has `chamvi.effect.outcome` `denied` (it has no attempt, so no effect span).
 */
export async function reportApproval(report: ApprovalTraceReport): Promise<void> {
  const api = await loadOpenTelemetry();
  const run = report.contexts[0]?.context as unknown as DurableTelemetryContext | undefined;
  if (api === undefined || run === undefined) return;
  const parent = api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: run.traceId,
    spanId: run.rootSpanId,
    traceFlags: run.traceFlags,
    isRemote: true,
    ...(run.traceState !== undefined ? { traceState: api.createTraceState(run.traceState) } : {}),
  });
  const { approval } = report;
  // Dates: the SDK would read epoch milliseconds from before this process began as `performance.now()` values.
  const requested = new Date(approval.requestedAt);
  const decided = new Date(approval.decidedAt);
  const span = api.trace.getTracer(TRACER_NAME).startSpan(
    `chamvi.approval ${approval.toolName}`,
    {
      startTime: requested,
      attributes: {
        'gen_ai.agent.name': report.agent,
        'gen_ai.tool.name': approval.toolName,
        'gen_ai.tool.call.id': approval.toolCallId,
        'chamvi.run.id': report.runId,
        'chamvi.step': report.step,
        ...(approval.key !== '' ? { 'chamvi.effect.key': approval.key } : {}),
        ...(approval.key !== '' && !approval.approved ? { 'chamvi.effect.outcome': 'denied' } : {}),
        'chamvi.approval.approved': approval.approved,
        'chamvi.approval.decided_by': approval.decidedBy,
        ...(approval.approver !== undefined ? { 'chamvi.approval.approver': approval.approver } : {}),
        ...(approval.reason !== undefined ? { 'chamvi.approval.reason': approval.reason } : {}),
      },
    },
    parent,
  );
  span.addEvent('requested', requested);
  span.addEvent(
    approval.decidedBy === 'timeout' ? 'timed out' : 'decided',
    { approved: approval.approved, decided_by: approval.decidedBy },
    decided,
  );
  span.end(decided);
}
