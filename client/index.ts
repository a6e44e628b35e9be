// Client-side entry point (`@chamvi/temporal/client`): what a web server or a script needs to
// start agent runs, follow them, stream them to useChat, read their conversation and decide their
// approvals. It loads @temporalio/client and @temporalio/common only: no worker, no native bridge,
// no workflow bundler (test/entry-points/entry-point-loads.test.ts checks it).
export {
  startAgentRun,
  type AgentRunHandle,
  type AgentRunStartOptions,
  type StartAgentRunOptions,
} from './start-agent-run.js';
export {
  createAgentClient,
  type AgentClientOptions,
  type TemporalConnectionSettings,
} from '../worker/connection-settings.js';
export { agentProgressQuery, type AgentProgress, type SettledToolCall } from '../common/agent-progress.js';
export { agentConversation, type AgentConversation } from './agent-conversation.js';
export { loadConversation, type ConversationSource } from '../src/conversation/load-conversation.js';
export {
  listPendingApprovals,
  decideApproval,
  approvalClaimsFor,
  ApprovalAmbiguousError,
  ApprovalNotPendingError,
  type DecideApprovalOptions,
  type ListPendingApprovalsOptions,
} from './approvals-client.js';
export { rollbackRun, rollbackWorkflowId, type RollbackRunOptions } from './rollback-run.js';
// The failure types the workflow raises to a client: a refused decision, a run that cannot take its
// input, a rollback left incomplete, a rollback asked too early.
export {
  ApprovalRefusedError,
  InvalidAgentInputError,
  RollbackIncompleteError,
  RunNotFinishedError,
} from '../src/errors/errors.js';
export { createApprovalToken, type ApprovalClaims } from '../src/approvals/approval-token.js';
export type { PendingApproval } from '../common/approval-types.js';
export { chamviDataConverter, type ChamviExternalStorageOptions } from '../worker/store-storage-driver.js';
// The run streams: the stores the workers stream model steps to, a run as an AI SDK UI message
// stream, the raw batches, and a chat route for useChat.
export { createRunStreamStore, type CreateRunStreamStoreOptions } from '../src/stream/create-run-stream-store.js';
export type {
  RunStreamBatch,
  RunStreamKey,
  RunStreamPart,
  RunStreamStore,
  RunStreamWriterRef,
} from '../src/stream/run-stream-store.js';
export {
  runUIMessageStream,
  RUN_STREAM_STOPPED,
  type RunUIMessageStreamOptions,
  type ChamviCursorChunk,
} from '../worker/stream/run-ui-message-stream.js';
export { approvalIdOf, type ChamviEffectChunk, type ChamviApprovalChunk } from '../worker/stream/run-progress-parts.js';
export type { SubAgentApprovalDescriptor } from '../worker/stream/sub-agent-view.js';
export { readRunStream, type ReadRunStreamOptions } from '../src/stream/read-run-stream.js';
export { chatRoute, type ChatRoute, type ChatRouteOptions } from '../worker/stream/chat-route.js';

// Types of other entry points that this one's functions take or return, re-exported as types (the
// same declarations): the agent workflow's input and output (`/workflows`), the stores' conversation
// capability (`/stores`), the reports and the error base class (the root).
export type { AgentCheckpoint, AgentLoopOptions, AgentRunOutput, StepSummary } from '../workflows/agent-loop.js';
export type { AgentWorkflowInput } from '../workflows/agent-workflow.js';
export type { RollbackOutput, RollbackWorkflowInput } from '../workflows/rollback-workflow.js';
export type {
  AppliedEffect,
  CompensateOn,
  CompensationReport,
  RunEffectOutcome,
  RunEffectReport,
} from '../common/run-effect-report.js';
export type { ApprovalRecord } from '../common/approval-types.js';
export type { ChildRunReport } from '../common/child-run-report.js';
export type {
  BudgetExhaustion,
  BudgetLimits,
  BudgetLink,
  BudgetState,
  ModelPrice,
  RunBudget,
  RunUsage,
} from '../common/run-usage.js';
export type { ConversationRef } from '../common/conversation-ref.js';
export type { JsonMessage, JsonToolOutput } from '../common/json-messages.js';
export type { RunTrace, RunTraceContext, RunTraceStep } from '../common/run-trace.js';
export type {
  JsonActivityOptions,
  ModelStepActivityOptions,
  StoreActivityOptions,
  ToolActivityOptions,
} from '../common/activity-options.js';
export type { AppendConversationOptions, ConversationStore } from '../src/stores/conversation-store.js';
export type { ConversationWriteOrder } from '../src/stores/conversation-write-order.js';
export type { ConversationEntry } from '../src/conversation/conversation-entry.js';
export type { EffectCallReport, EffectOutcome } from '../src/effects/effect-report.js';
export type { ChamviError } from '../src/errors/chamvi-error.js';
