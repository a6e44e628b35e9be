// Node-side entry point (`@chamvi/temporal/worker`): the worker. One way to build it: the Temporal
// plugin `chamviPlugin` (activities, workflows, External Storage) on your own `Worker.create`, or
// `createAgentWorker`, which opens what its options name (connection, store, stream), checks the
// store and creates the worker with that plugin. Clients import `@chamvi/temporal/client`.
export { chamviPlugin, type ChamviPluginOptions } from './chamvi-plugin.js';
export { createAgentWorker, type AgentWorkerOptions } from './create-agent-worker.js';
export type { AgentEntry, AgentRegistration } from '../activities/agent-registry.js';
export type {
  ApprovalStatus,
  ToolApprovalCallOptions,
  ToolApprovalRule,
  ToolApprovalSettings,
} from '../src/approvals/approval-policy.js';
export { EffectStoreUnavailableError } from './effect-store-check.js';
export { chamviWorkflowsPath } from './workflows-path.js';
export {
  workerHealthPlugin,
  workerHealthFromEnv,
  type WorkerHealthOptions,
  type WorkerHealthReport,
} from './worker-health.js';
export { EFFECT_METRICS } from '../activities/effect-telemetry.js';
export { MODEL_METRICS } from '../activities/step-usage.js';
export { externalStorageProblem } from './store-storage-driver.js';

// Types of other entry points that this one's functions take, re-exported as types (the same
// declarations): agents and the tool context (the root), stores (`/stores`), run streams and the
// External Storage options (`/client`), activity options (`/workflows`), the error base class.
export type { Agent } from '../src/agent/define-agent.js';
export type { AgentSettings, AgentSettingName, AgentRuntimeContext } from '../src/agent/agent-settings.js';
export type { EffectCallInfo, RunData, RunInfo, ToolContext } from '../src/context/tool-context.js';
export type { EffectOrigin, EffectRecord, EffectRecordInput, IEffectStore } from '../src/stores/effect-store.js';
export type { AppendConversationOptions, ConversationStore } from '../src/stores/conversation-store.js';
export type { ConversationWriteOrder } from '../src/stores/conversation-write-order.js';
export type { ConversationEntry } from '../src/conversation/conversation-entry.js';
export type {
  RunStreamBatch,
  RunStreamKey,
  RunStreamPart,
  RunStreamStore,
  RunStreamWriterRef,
} from '../src/stream/run-stream-store.js';
export type { ChamviExternalStorageOptions } from './store-storage-driver.js';
export type { JsonActivityOptions, ToolActivityOptions } from '../common/activity-options.js';
export type { ChamviError } from '../src/errors/chamvi-error.js';
