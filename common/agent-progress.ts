// The progress query of the agent workflow, defined without @temporalio/workflow (the plain object
// its defineQuery returns), so that the workflow's handler and the clients share one definition.
import type { QueryDefinition } from '@temporalio/common';
import type { ConversationRef } from './conversation-ref.js';
import type { ApprovalRecord } from './approval-types.js';
import type { RunEffectReport } from './run-effect-report.js';
import type { JsonToolOutput } from './json-messages.js';

/** What the progress query answers while an agent runs. @public */
export interface AgentProgress {
  readonly runId: string;
  readonly agent: string;
  /** The step running or last run (0-based). */
  readonly step: number;
  readonly status: 'running' | 'completed';
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
