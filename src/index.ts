// The root entry point (`@chamvi/temporal`): the core API, free of Temporal and light to import
// (it loads neither `pg`, nor `node:sqlite`, nor `child_process`). Stores other than the memory
// store are on `@chamvi/temporal/stores` (createEffectStore, specs, inspection),
// `@chamvi/temporal/stores/sqlite` and `@chamvi/temporal/stores/postgres`; the reconciliation
// strategies on `@chamvi/temporal/strategies`; Temporal on `/worker`, `/workflows`, `/testing`.
export { ChamviError } from './errors/chamvi-error.js';
// Every error class of the library: the failure catalogue (src/errors/failure-policy.ts) names each.
export {
  ApprovalRequiredError,
  DuplicateToolCallIdError,
  EffectBusyError,
  EffectClaimLostError,
  EffectFenceRefusedError,
  EffectKeyMismatchError,
  EffectKeyNotStorableError,
  EffectOutcomeUnknownError,
  EffectResultNotSerializableError,
  EffectResultTooLargeError,
  EffectStoreError,
  EffectStoreOpenError,
  EffectStoreSchemaError,
  GitCommandError,
  IdempotencyKeyInProgressError,
  IdempotencyKeyReusedError,
  IdempotentRequestError,
  InvalidApprovalClaimsError,
  InvalidApprovalSecretError,
  InvalidClaimRequestError,
  InvalidEffectKeyError,
  InvalidEffectStoreSpecError,
  InvalidEffectToolError,
  InvalidOptionError,
  InvalidToolContextError,
  InvalidToolInputError,
  LegacyContextFieldError,
  MissingPeerDependencyError,
  RemoteRefContendedError,
  RunStreamClosedError,
  ToolNotAllowedError,
  UnknownAgentError,
  UnknownToolError,
  UnsupportedJsonValueError,
} from './errors/errors.js';
export { canonicalJson, type CanonicalJsonOptions } from './json/canonical-json.js';
export { defaultEffectKey, inputFingerprint, resolveEffectKey } from './effects/effect-key.js';
export { stepIndex, type StepIndexOptions } from './effects/step-index.js';
export { effectKeyOf, effectFenceOf } from './effects/effect-key-of.js';
export { effectMarker, findEffectMarkers } from './effects/effect-marker.js';
export {
  defineEffectTool,
  isEffectTool,
  EFFECT_TOOL,
  type EffectTool,
  type EffectToolDefinition,
  type EffectToolHooks,
} from './effects/define-effect-tool.js';
export { applyEffect, type EffectCall, type EffectEnv, type EffectResolution } from './effects/effect-protocol.js';
export {
  consoleEffectLogger,
  type EffectCallReport,
  type EffectLogger,
  type EffectOutcome,
} from './effects/effect-report.js';
export {
  createToolContext,
  guardToolContext,
  type EffectCallInfo,
  type RunData,
  type RunInfo,
  type ToolContext,
  type ToolContextInit,
} from './context/tool-context.js';
export {
  hasClaims,
  type ClaimRequest,
  type ClaimResult,
  type ClaimToken,
  type EffectClaims,
  type EffectOrigin,
  type EffectRecord,
  type EffectRecordInput,
  type FencedResult,
  type IEffectStore,
} from './stores/effect-store.js';
export { DEFAULT_RETENTION_MS, type RetentionOptions } from './stores/retention.js';
export { MemoryEffectStore, type MemoryEffectStoreOptions } from './stores/memory-effect-store.js';
// Run conversations in the store, by reference (issue 16): content-addressed entries, the store capability, the reader.
export {
  chainEntries,
  conversationEntryKey,
  conversationRoot,
  type ConversationEntry,
} from './conversation/conversation-entry.js';
export {
  ABANDONED_RUN_MS,
  hasConversationStore,
  type AppendConversationOptions,
  type ConversationStore,
} from './stores/conversation-store.js';
export { MemoryConversationStore, type MemoryConversationStoreOptions } from './stores/memory-conversation.js';
export { ConversationCache, DEFAULT_CONVERSATION_CACHE_BYTES } from './conversation/conversation-cache.js';
export { ConversationLog, messagesOf } from './conversation/conversation-log.js';
export { loadConversation, type ConversationSource } from './conversation/load-conversation.js';
export {
  ConversationEntryCorruptError,
  ConversationEntryMissingError,
  OffloadedPayloadCorruptError,
  OffloadedPayloadMissingError,
} from './errors/errors.js';
export {
  defineAgent,
  isAgent,
  DEFAULT_MAX_STEPS,
  type Agent,
  type AgentDefinition,
  type ToolLoopAgentDefinition,
} from './agent/define-agent.js';
export type { AgentSettings, AgentSettingName, AgentOutput, AgentRuntimeContext } from './agent/agent-settings.js';
export type { ToolLoopAgentSource } from './agent/tool-loop-agent-source.js';
export { UnsupportedAgentSettingError } from './errors/unsupported-agent-setting-error.js';
export { wrapToolsForRun, type AllowTool, type WrapOptions } from './agent/wrap-tools-for-run.js';
export { runAgent, type AgentPrompt, type AgentRunResult, type RunAgentOptions } from './agent/run-agent.js';
export {
  createApprovalToken,
  verifyApprovalToken,
  type ApprovalClaims,
  type ApprovalTokenVerdict,
  type VerifyApprovalTokenOptions,
} from './approvals/approval-token.js';
export { MIN_APPROVAL_SECRET_BYTES } from './approvals/approval-secret.js';
export {
  resolveApproval,
  type ApprovalStatus,
  type ResolvedApproval,
  type ToolApprovalCallOptions,
  type ToolApprovalRule,
  type ToolApprovalSettings,
} from './approvals/approval-policy.js';
export {
  mcpTools,
  mcpToolPolicy,
  type McpToolAnnotations,
  type McpToolDeclaration,
  type McpToolDefinition,
  type McpToolPolicy,
  type McpTools,
  type McpToolSource,
  type McpToolsOptions,
} from './mcp/mcp-tools.js';
