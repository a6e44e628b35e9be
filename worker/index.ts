// Node-side entry point (`@chamvi/temporal/worker`): worker factory, plugin, activities. The client
// helpers live in `@chamvi/temporal/client`; the ones exported here before it are deprecated aliases.
export { chamviPlugin, type ChamviPluginOptions } from './chamvi-plugin.js';
export { createAgentWorker, type AgentWorkerOptions } from './create-agent-worker.js';
export { checkEffectStore, EffectStoreUnavailableError, type CheckedStore } from './effect-store-check.js';
export {
  workerHealthPlugin,
  workerHealthFromEnv,
  WorkerHealthError,
  HEALTH_PORT_ENV,
  HEALTH_HOST_ENV,
  type WorkerHealthOptions,
  type WorkerHealthReport,
} from './worker-health.js';
export {
  createAgentClient,
  resolveTemporalConnection,
  DEFAULT_TEMPORAL_ADDRESS,
  DEFAULT_TEMPORAL_NAMESPACE,
  type AgentClientOptions,
  type ResolvedTemporalConnection,
  type TemporalConnectionSettings,
} from './connection-settings.js';
export { chamviWorkflowsPath } from './workflows-path.js';
export {
  createChamviActivities,
  AgentRegistry,
  type AgentEntry,
  type AgentRegistration,
  type ChamviActivitiesOptions,
  APPROVAL_SECRET_ENV,
  EFFECT_METRICS,
  ModelCallFailedError,
  ModelCallRejectedError,
} from '../activities/index.js';
export { ACTIVITY_NAMES, type ChamviActivityName } from '../common/activity-names.js';
export type * from '../common/index.js';
export type { AgentRunOutput, AgentCheckpoint, StepSummary } from '../workflows/agent-loop.js';
export type { AgentWorkflowInput } from '../workflows/agent-workflow.js';
export {
  chamviDataConverter,
  chamviExternalStorage,
  storeStorageDriver,
  externalStorageAvailable,
  externalStorageProblem,
  DEFAULT_OFFLOAD_THRESHOLD_BYTES,
  type ChamviExternalStorageOptions,
  type TemporalExternalStorage,
  type TemporalStorageDriver,
} from './store-storage-driver.js';
export {
  startAgentRun,
  runAgentWorkflow,
  AGENT_SEARCH_ATTRIBUTE,
  type AgentRunStartOptions,
  type StartAgentRunOptions,
  listPendingApprovals,
  decideApproval,
  approvalClaimsFor,
  ApprovalNotPendingError,
  ApprovalSecretMissingError,
  type DecideApprovalOptions,
  decideApprovalUpdate,
  approvalDecisionSignal,
  pendingApprovalsQuery,
  agentProgressQuery,
  type AgentProgress,
  agentConversation,
  type AgentConversation,
  loadConversation,
  type ConversationSource,
} from './deprecated-client-exports.js';
