import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  isCancellation,
  TerminatedFailure,
  TimeoutFailure,
  ParentClosePolicy,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { ChildRunReport, JsonToolOutput, RunRef, ToolCallPlan } from '../common/index.js';
import type { AgentLoopOptions } from './agent-loop.js';
import type { BudgetLink } from '../common/run-usage.js';
import type { agentWorkflow } from './agent-workflow.js';
import { failurePolicyOf } from '../src/errors/failure-policy.js';

/** What a parent passes on to its sub-agent runs. */
export interface SubAgentSettings {
  /** The parent's step whose calls these are. */
  readonly step: number;
  /** The parent's activity options: the child's steps and store writes run under the same. */
  readonly activityOptions?: AgentLoopOptions['activityOptions'];
  /** Told when a child has started (its report says `running`). */
  readonly started?: (report: ChildRunReport) => void;
  /** The budget the child's steps count against (absent: the tree has none). */
  readonly budgetFrom?: BudgetLink;
}

/** How a sub-agent call ended: what the parent's model gets, and the child's report. */
export interface SubAgentOutcome {
  readonly output: JsonToolOutput;
  readonly report: ChildRunReport;
}

/**
 * Runs the sub-agent of an agent tool's call as a child `agentWorkflow`, to its end. Its ids are
 * derived from the parent's (see `ChildRunPlan.id`); the parent-close policy terminates it when
 * the parent closes without it, and a cancelled parent cancels it and waits for it to end.
 *
 * A child that completes answers the model with its final text. One that fails, is terminated or
 * is cancelled on its own (the parent is not) answers with an `error-text` by the failure
 * catalogue; a failure whose catalogue entry says `run` fails the parent instead, and a
 * cancelled parent's cancellation goes on up.
 */
export async function runSubAgent(
  run: RunRef,
  call: ToolCallPlan,
  settings: SubAgentSettings,
): Promise<SubAgentOutcome> {
  const child = call.child;
  if (child === undefined)
    throw new TypeError(`Tool call ${call.toolCallId} is planned as an agent call without a child.`);
  const parent = workflowInfo().workflowId;
  const base = {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    agent: child.agent,
    step: settings.step,
    workflowId: `${parent}:${child.id}`,
    runId: `${run.runId}:${child.id}`,
  };
  try {
    const handle = await startChild<typeof agentWorkflow>('agentWorkflow', {
      workflowId: base.workflowId,
      args: [
        {
          agent: child.agent,
          prompt: child.prompt,
          runId: base.runId,
          trigger: {
            parent: { workflowId: parent, runId: run.runId, toolCallId: call.toolCallId, toolName: call.toolName },
          },
          ...(settings.activityOptions !== undefined ? { activityOptions: settings.activityOptions } : {}),
          ...(settings.budgetFrom !== undefined ? { budgetFrom: settings.budgetFrom } : {}),
        },
      ],
      parentClosePolicy: ParentClosePolicy.TERMINATE,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      staticSummary: `sub-agent ${child.agent} · step ${settings.step} of ${run.agent} · tool ${call.toolName}`.slice(
        0,
        200,
      ),
    });
    settings.started?.({ ...base, status: 'running' });
    const output = await handle.result();
    const report: ChildRunReport = {
      ...base,
      status: 'completed',
      steps: output.steps.length,
      effects: output.effects,
      usage: output.usage,
      ...(output.budgetExhausted !== undefined ? { budgetExhausted: output.budgetExhausted } : {}),
      ...(output.approvals.length > 0 ? { approvals: output.approvals } : {}),
      ...(output.children !== undefined && output.children.length > 0 ? { children: output.children } : {}),
    };
    return { output: { type: 'text', value: output.text }, report };
  } catch (error) {
    // The parent's own cancellation goes on up; a child cancelled on its own is a tool error.
    if (isCancellation(error) && CancellationScope.current().consideredCancelled) throw error;
    const failure = childFailure(error);
    if (failurePolicyOf(failure.type)?.then === 'run')
      throw ApplicationFailure.create({
        ...failure,
        nonRetryable: true,
        cause: error instanceof Error ? error : undefined,
      });
    const value = `Sub-agent ${child.agent} (tool ${call.toolName}) failed: ${failure.type}: ${failure.message}`;
    return { output: { type: 'error-text', value }, report: { ...base, status: 'failed', error: failure } };
  }
}

/**
 * Why a child ended without a result: the first failure down its cause chain that says (an
 * application failure's type, or termination, timeout, cancellation), with the messages of the
 * chain from there.
 */
function childFailure(error: unknown): { type: string; message: string } {
  let at: unknown = error instanceof ChildWorkflowFailure ? error.cause : error;
  while (at instanceof ActivityFailure || at instanceof ChildWorkflowFailure) at = at.cause;
  const type =
    at instanceof ApplicationFailure
      ? (at.type ?? 'Error')
      : at instanceof TerminatedFailure
        ? 'Terminated'
        : at instanceof TimeoutFailure
          ? 'TimedOut'
          : at instanceof CancelledFailure
            ? 'Cancelled'
            : at instanceof Error
              ? at.name
              : typeof at;
  const messages: string[] = [];
  for (let e: unknown = at; e instanceof Error && messages.length < 5; e = e.cause) {
    if (e.message !== '' && !messages.includes(e.message)) messages.push(e.message);
  }
  return { type, message: messages.length > 0 ? messages.join(': ') : String(at) };
}
