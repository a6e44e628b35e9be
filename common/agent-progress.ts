// The progress query of the agent workflow, defined without @temporalio/workflow (the plain object
// its defineQuery returns), so that the workflow's handler and the clients share one definition.
import type { QueryDefinition } from '@temporalio/common';
import type { BudgetLimits, RunUsage } from './run-usage.js';
import type { ConversationRef } from './conversation-ref.js';
import type { ApprovalRecord } from './approval-types.js';
import type { ChildRunReport } from './child-run-report.js';
import type { AppliedEffect, RunEffectReport } from './run-effect-report.js';
import type { JsonToolOutput } from './json-messages.js';
import type { RunRef } from './activity-contract.js';

/** What the progress query answers while an agent runs. @public */
export interface AgentProgress {
  /** The run id (`ctx.run.runId`, the prefix of its effect keys). */
  readonly runId: string;
  /** Name of the agent running. */
  readonly agent: string;
  /** The step running or last run (0-based). */
  readonly step: number;
  /**
   * `running` until the final step ended, then `completed`; `compensating` while a failed or cancelled run (or a rollback) undoes its effects, then
   * `rolled-back` or `rollback-incomplete` (a compensation kept failing; see each effect's
   * `compensation`).
   */
  readonly status: 'running' | 'completed' | 'compensating' | 'rolled-back' | 'rollback-incomplete';
  /**
   * The conversation so far, by reference: the key of its last stored entry and the messages not
   * stored yet; `loadConversation(store, progress)` reads it.
   */
  readonly conversation: ConversationRef;
  /** Effect calls so far, in order: every one, also those that failed or were denied. */
  readonly effects: RunEffectReport[];
  /**
   * Approval decisions of the steps whose calls all ended, in order. A call waiting for a decision
   * is in the `chamvi.pendingApprovals` query instead.
   */
  readonly approvals: ApprovalRecord[];
  /**
   * The running step's calls that have ended while others of the step still wait (for approval) or
   * run; absent when there are none. Once every call of the step
   * ended, their results are in `conversation` instead.
   */
  readonly settled?: SettledToolCall[];
  /**
   * The run's sub-agent runs: those that ended, in order, then those running (`status:
   * 'running'`); absent when there are none. @beta
   */
  readonly children?: ChildRunReport[];
  /** What the model steps of the run and of its ended sub-agent runs used so far. @beta */
  readonly usage?: RunUsage;
  /** The run's budget: the limits in force and what the tree has used, running sub-agents' steps included (absent: no budget). @beta */
  readonly budget?: { readonly limits: BudgetLimits; readonly used: RunUsage };
}

/** A tool call of the running step that has ended: what the model will be sent for it. @public */
export interface SettledToolCall {
  /** The call's id, as the model step planned it. */
  readonly toolCallId: string;
  /** The tool's name. */
  readonly toolName: string;
  /** The tool result's output, as the model will get it (`json`, `text`, `error-text`, `execution-denied`, ...). */
  readonly output: JsonToolOutput;
  /** Effect calls: how the call ended. */
  readonly report?: RunEffectReport;
}

/** Query `chamvi.progress`: the current step and the effects so far. @public */
export const agentProgressQuery = { type: 'query', name: 'chamvi.progress' } as QueryDefinition<
  AgentProgress,
  [],
  'chamvi.progress'
>;

/** What the `chamvi.appliedEffects` query answers: the run as its activities see it, its applied calls and its effect report. */
export interface AppliedEffects {
  readonly run: RunRef;
  readonly applied: AppliedEffect[];
  readonly effects: RunEffectReport[];
}

/**
 * Query `chamvi.appliedEffects`: the run's applied effect calls (`executed` or `reconciled`), in
 * order, with their inputs, for `rollbackRun`. Internal: the shape may change in any release.
 */
export const appliedEffectsQuery = { type: 'query', name: 'chamvi.appliedEffects' } as QueryDefinition<
  AppliedEffects,
  [],
  'chamvi.appliedEffects'
>;
