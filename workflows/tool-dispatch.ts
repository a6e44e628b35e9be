import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities } from '@temporalio/workflow';
import { DEFAULT_STORE_OPTIONS, DEFAULT_TOOL_OPTIONS, toActivityOptions } from '../common/activity-options.js';
import { ACTIVITY_NAMES } from '../common/activity-names.js';
import { failurePolicyOf } from '../src/errors/failure-policy.js';
import { toFailure } from '../common/to-failure.js';
import { InvalidAgentInputError } from '../src/errors/errors.js';
import type { ApprovalGate } from './approvals.js';
import type { CallConversation } from './conversation-state.js';
import type {
  ApprovalEvidence,
  ApprovalRecord,
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
 * the attempts it took) or was denied (`denied`, with the reason, 0 attempts).
 */
export async function dispatchToolCalls(
  run: RunRef,
  seen: CallConversation,
  calls: ToolCallPlan[],
  storeOptions?: StoreActivityOptions,
  approvals?: { readonly gate: ApprovalGate; readonly step: number },
): Promise<DispatchedCall[]> {
  const shared = new Map<string, Promise<ToolCallResult>>();
  const started = calls.map(async (call): Promise<DispatchedCall> => {
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
    const withApproval = approval === undefined ? {} : { approval };
    let first = false;
    let pending = call.key === undefined ? undefined : shared.get(call.key);
    if (pending === undefined) {
      first = true;
      const evidence = approval === undefined ? undefined : approvals?.gate.evidenceFor(toolCallId);
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
              attempts: attemptsOf(error, call),
              error: lastError(error),
            }
          : undefined;
      return { toolCallId, toolName, output, ...(report !== undefined ? { report } : {}), ...withApproval };
    }
  });
  return Promise.all(started);
}

/**
 * Schedules the activity of one planned call (effect or plain). `seen` is what the model saw for
 * the call's step: by reference (the activity reads it from the store when the tool looks), or
 * whole for runs begun before 0.3.
 */
export function scheduleCall(
  run: RunRef,
  seen: CallConversation,
  call: ToolCallPlan,
  approval?: ApprovalEvidence,
  step?: number,
): Promise<ToolCallResult> {
  const what =
    call.kind === 'effect'
      ? `effect ${call.toolName} · key ${call.key ?? ''}`
      : `tool ${call.toolName} · call ${call.toolCallId}`;
  // The UI names the step and the tool (runs begun before 0.3 keep their summaries); the key is in the input.
  const summary =
    step === undefined || seen.conversation === undefined
      ? what
      : `step ${step} · ${call.kind === 'effect' ? 'effect' : 'tool'} ${call.toolName}`;
  const activities = proxyActivities<ChamviActivities>({
    ...toActivityOptions(DEFAULT_TOOL_OPTIONS, call.options),
    summary: summary.length > 200 ? `${summary.slice(0, 197)}...` : summary,
  });
  const input = {
    ...run,
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    input: call.input,
    ...(seen.conversation !== undefined ? { conversation: seen.conversation } : { messages: seen.messages }),
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
  result: ToolCallResult,
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

/**
 * What the model is told when a call failed, by the failure catalogue: failures it can correct or
 * must know about (not retried) are told as `<type>: <message>`, the last error after the retries
 * as such; failures whose catalogue entry says `run` fail the run instead.
 */
function failureForModel(toolName: string, error: unknown): string {
  // A cancelled run stops here; the model is not asked to carry on.
  if (isCancellation(error)) throw error;
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    const policy = failurePolicyOf(cause.type);
    if (policy?.then === 'run')
      throw ApplicationFailure.create({
        type: cause.type ?? undefined,
        message: cause.message,
        nonRetryable: true,
        cause,
      });
    if (policy !== undefined && (policy.retried === false || cause.nonRetryable))
      return `${cause.type ?? ''}: ${cause.message}`;
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return `Tool ${toolName} failed after its retries: ${message}`;
}

/**
 * How many attempts a failed call took: the attempt the activity put in its failure's details
 * (`activities/failures.ts`), else the retry policy's maximum when Temporal says it was reached
 * (a last attempt that timed out carries no details), else 1.
 */
function attemptsOf(error: unknown, call: ToolCallPlan): number {
  const activity = error instanceof ActivityFailure ? error : undefined;
  const cause = activity?.cause;
  if (cause instanceof ApplicationFailure) {
    const attempt = (cause.details?.[0] as { attempt?: unknown } | undefined)?.attempt;
    if (typeof attempt === 'number' && attempt > 0) return attempt;
  }
  const maximum = toActivityOptions(DEFAULT_TOOL_OPTIONS, call.options).retry?.maximumAttempts;
  if (activity?.retryState === 'MAXIMUM_ATTEMPTS_REACHED' && maximum !== undefined) return maximum;
  return 1;
}

/** The last attempt's failure: its type and its message followed by its causes' messages. */
function lastError(error: unknown): { type: string; message: string } {
  const cause = error instanceof ActivityFailure && error.cause !== undefined ? error.cause : error;
  const type =
    cause instanceof ApplicationFailure
      ? (cause.type ?? 'Error')
      : cause instanceof Error
        ? cause.constructor.name
        : typeof cause;
  const messages: string[] = [];
  for (let at: unknown = cause; at instanceof Error && messages.length < 5; at = at.cause) {
    if (at.message !== '' && !messages.includes(at.message)) messages.push(at.message);
  }
  return { type, message: messages.length > 0 ? messages.join(': ') : String(cause) };
}
