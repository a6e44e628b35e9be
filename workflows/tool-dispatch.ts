import { proxyActivities } from '@temporalio/workflow';
import { DEFAULT_STORE_OPTIONS, DEFAULT_TOOL_OPTIONS, toActivityOptions } from '../common/activity-options.js';
import { ACTIVITY_NAMES } from '../common/activity-names.js';
import { toFailure } from '../common/to-failure.js';
import { InvalidAgentInputError } from '../src/errors/errors.js';
import type { ApprovalGate } from './approvals.js';
import { attemptsOf, failureForModel, lastError } from './call-failures.js';
import { runSubAgent, type SubAgentOutcome, type SubAgentSettings } from './sub-agents.js';
import type {
  ApprovalEvidence,
  ApprovalRecord,
  CallConversationRef,
  ChildRunReport,
  ChamviActivities,
  JsonToolOutput,
  RunEffectReport,
  RunRef,
  StoreActivityOptions,
  ToolCallPlan,
  ToolCallResult,
} from '../common/index.js';

/** A tool call's answer to the model, plus its effect report entry (effect tools only). */
export interface DispatchedCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly output: JsonToolOutput;
  /** Effect calls: how the call ended (also `failed` and `denied`). */
  readonly report?: RunEffectReport;
  /** How the call's approval ended, when it needed one. */
  readonly approval?: ApprovalRecord;
  /** Agent tool calls: the sub-agent run (on the first call of the step that started it). */
  readonly child?: ChildRunReport;
}

/**
 * Runs the tool calls of one step, one activity per call, all at once. Effect calls with the same
 * effect key share one activity (one application); the other calls report `recorded`. A failed
 * record write is retried by the effect-store activity before the step ends.
 *
 * A call planned with an approval first waits at the gate; a denied call (by the approver, the
 * policy or the timeout) schedules nothing, so the remote is never touched, and the model gets an
 * `execution-denied` result with the reason.
 *
 * Every effect call gets a report entry, also one that failed (`failed`, with its last error and
 * the attempts it took) or was denied (`denied`, with the reason, 0 attempts). `onSettled` hears
 * of each call as it ends, before the others have.
 */
export function dispatchToolCalls(
  run: RunRef,
  seen: CallConversationRef,
  calls: ToolCallPlan[],
  storeOptions?: StoreActivityOptions,
  approvals?: {
    readonly gate: ApprovalGate;
    readonly step: number;
    /** Told each decision as it is taken (the run's trace reports it). */
    readonly decided?: (approval: ApprovalRecord) => void;
  },
  onSettled?: (call: DispatchedCall) => void,
  subAgents?: SubAgentSettings,
): Promise<DispatchedCall[]> {
  const shared = new Map<string, Promise<ToolCallResult>>();
  const children = new Map<string, Promise<SubAgentOutcome>>();
  // The calls start in their order, without an async wrapper each: Temporal records a stack for
  // every promise workflow code makes.
  return Promise.all(
    calls.map((call) =>
      dispatchOne(call).then((dispatched) => {
        onSettled?.(dispatched);
        return dispatched;
      }),
    ),
  );

  async function dispatchOne(call: ToolCallPlan): Promise<DispatchedCall> {
    const { toolCallId, toolName } = call;
    let approval: ApprovalRecord | undefined;
    if (call.approval !== undefined) {
      if (approvals === undefined) {
        throw toFailure(
          new InvalidAgentInputError(
            `Tool call ${toolCallId} (${toolName}) needs approval, but this loop has no approval gate.`,
          ),
        );
      }
      approval = await approvals.gate.decisionFor(call, approvals.step);
      approvals.decided?.(approval);
      if (!approval.approved) {
        const reason = deniedReason(approval);
        const report: RunEffectReport | undefined =
          call.kind === 'effect'
            ? { key: call.key ?? '', toolName, toolCallId, outcome: 'denied', attempts: 0, reason }
            : undefined;
        return {
          toolCallId,
          toolName,
          output: { type: 'execution-denied', reason },
          approval,
          ...(report !== undefined ? { report } : {}),
        };
      }
    }
    // Approved by the rule without asking: runs as a call without one, and the run records the decision.
    if (call.approval === undefined && call.approvedByPolicy !== undefined) approval = approvedByPolicy(call);
    const withApproval = approval === undefined ? {} : { approval };
    if (call.kind === 'agent') {
      if (subAgents === undefined || call.child === undefined) {
        throw toFailure(
          new InvalidAgentInputError(
            `Tool call ${toolCallId} (${toolName}) runs a sub-agent, but this loop runs none.`,
          ),
        );
      }
      // Two calls of the step with the same input are one child: the first reports it.
      let running = children.get(call.child.id);
      const firstOfChild = running === undefined;
      if (running === undefined) {
        running = runSubAgent(run, call, subAgents);
        children.set(call.child.id, running);
      }
      const { output, report } = await running;
      return { toolCallId, toolName, output, ...(firstOfChild ? { child: report } : {}), ...withApproval };
    }
    let first = false;
    let pending = call.key === undefined ? undefined : shared.get(call.key);
    if (pending === undefined) {
      first = true;
      const evidence = call.approval === undefined ? undefined : approvals?.gate.evidenceFor(toolCallId);
      pending = scheduleCall(run, seen, call, evidence, approvals?.step);
      if (call.key !== undefined) shared.set(call.key, pending);
    }
    try {
      const result = await pending;
      if (first && result.unrecorded !== undefined) await recordLater(result, storeOptions);
      // A planned call's report leaves out what the plan says (key, tool): they come from here.
      const full = result.report === undefined ? undefined : { key: call.key ?? '', toolName, ...result.report };
      const report =
        full === undefined
          ? undefined
          : first
            ? { ...full, toolCallId }
            : { ...full, toolCallId, outcome: 'recorded' as const };
      return { toolCallId, toolName, output: result.output, ...(report ? { report } : {}), ...withApproval };
    } catch (error) {
      const output = { type: 'error-text', value: failureForModel(toolName, error) } as const;
      const report: RunEffectReport | undefined =
        call.kind === 'effect'
          ? {
              key: call.key ?? '',
              toolName,
              toolCallId,
              outcome: 'failed',
              attempts: attemptsOf(error, call.options),
              error: lastError(error),
            }
          : undefined;
      return { toolCallId, toolName, output, ...(report !== undefined ? { report } : {}), ...withApproval };
    }
  }
}

/**
 * Schedules the activity of one planned call (effect or plain). `seen` is what the model saw for
 * the call's step, by reference: the activity reads it from the store when the tool looks.
 */
export function scheduleCall(
  run: RunRef,
  seen: CallConversationRef,
  call: ToolCallPlan,
  approval?: ApprovalEvidence,
  step?: number,
): Promise<ToolCallResult> {
  const what =
    call.kind === 'effect'
      ? `effect ${call.toolName} · key ${call.key ?? ''}`
      : `tool ${call.toolName} · call ${call.toolCallId}`;
  // The UI names the step and the tool; the key is in the input.
  const summary =
    step === undefined ? what : `step ${step} · ${call.kind === 'effect' ? 'effect' : 'tool'} ${call.toolName}`;
  const activities = proxyActivities<ChamviActivities>({
    ...toActivityOptions(DEFAULT_TOOL_OPTIONS, call.options),
    summary: summary.length > 200 ? `${summary.slice(0, 197)}...` : summary,
  });
  const input = {
    ...run,
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    input: call.input,
    conversation: seen,
    ...(call.key !== undefined ? { key: call.key } : {}),
    ...(approval !== undefined ? { approval } : {}),
  };
  return call.kind === 'effect'
    ? activities[ACTIVITY_NAMES.effectCall](input)
    : activities[ACTIVITY_NAMES.toolCall](input);
}

function deniedReason(record: ApprovalRecord): string {
  const why = record.reason !== undefined && record.reason !== '' ? `: ${record.reason}` : '.';
  if (record.decidedBy === 'approver') return `The call was denied by ${record.approver ?? 'the approver'}${why}`;
  if (record.decidedBy === 'timeout') return record.reason ?? 'Nobody approved the call in time.';
  return `The call was denied by the approval policy${why}`;
}

/** Writes a record the effect activity could not write, through the effect-store activity. */
export async function recordLater(
  result: Pick<ToolCallResult, 'unrecorded'>,
  storeOptions: StoreActivityOptions | undefined,
): Promise<void> {
  const unrecorded = result.unrecorded;
  if (unrecorded === undefined) return;
  const activities = proxyActivities<ChamviActivities>({
    ...toActivityOptions(DEFAULT_STORE_OPTIONS, storeOptions),
    summary: `record effect · key ${unrecorded.key}`.slice(0, 200),
  });
  await activities[ACTIVITY_NAMES.recordEffect](unrecorded);
}

/** The record of a call the approval rule approved without asking. */
function approvedByPolicy(call: ToolCallPlan): ApprovalRecord {
  const at = new Date().toISOString();
  const reason = call.approvedByPolicy?.reason;
  return {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    key: call.key ?? '',
    approved: true,
    decidedBy: 'policy',
    ...(reason !== undefined ? { reason } : {}),
    requestedAt: at,
    decidedAt: at,
  };
}
