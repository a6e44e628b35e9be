// Client-side entry point (`@chamvi/temporal/client`): what a web server or a script needs to
// start agent runs, follow them, stream them to useChat, read their conversation and decide their
// approvals. It loads @temporalio/client and @temporalio/common only: no worker, no native bridge,
// no workflow bundler (test/entry-points/entry-point-loads.test.ts checks it).
export {
  startAgentRun,
  runAgentWorkflow,
  AGENT_SEARCH_ATTRIBUTE,
  type AgentRunStartOptions,
  type StartAgentRunOptions,
} from './start-agent-run.js';
export {
  createAgentClient,
  resolveTemporalConnection,
  DEFAULT_TEMPORAL_ADDRESS,
  DEFAULT_TEMPORAL_NAMESPACE,
  type AgentClientOptions,
  type ResolvedTemporalConnection,
  type TemporalConnectionSettings,
} from '../worker/connection-settings.js';
export {
  listPendingApprovals,
  decideApproval,
  approvalClaimsFor,
  ApprovalNotPendingError,
  ApprovalSecretMissingError,
  type DecideApprovalOptions,
} from './approvals-client.js';
export { APPROVAL_SECRET_ENV } from '../src/approvals/approval-secret.js';
export { decideApprovalUpdate, approvalDecisionSignal, pendingApprovalsQuery } from '../common/approval-handlers.js';
export { agentProgressQuery, type AgentProgress, type SettledToolCall } from '../common/agent-progress.js';
export { agentConversation, type AgentConversation } from './agent-conversation.js';
export { loadConversation, type ConversationSource } from '../src/conversation/load-conversation.js';
export {
  chamviDataConverter,
  chamviExternalStorage,
  externalStorageAvailable,
  externalStorageProblem,
  DEFAULT_OFFLOAD_THRESHOLD_BYTES,
  type ChamviExternalStorageOptions,
  type TemporalExternalStorage,
} from '../worker/store-storage-driver.js';
export type { AgentRunOutput, AgentCheckpoint, StepSummary } from '../workflows/agent-loop.js';
export type { AgentWorkflowInput } from '../workflows/agent-workflow.js';
export type * from '../common/index.js';
// The run streams (what `@chamvi/temporal/stream` exports, which stays as an alias of this part).
export * from '../worker/stream/index.js';
