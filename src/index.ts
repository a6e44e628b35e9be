export { ChamviError } from './errors/chamvi-error.js';
export {
  ApprovalRequiredError,
  EffectBusyError,
  EffectClaimLostError,
  EffectOutcomeUnknownError,
  EffectResultNotSerializableError,
  EffectResultTooLargeError,
  EffectStoreError,
  InvalidEffectKeyError,
  InvalidEffectToolError,
  InvalidToolContextError,
  InvalidToolInputError,
  LegacyContextFieldError,
  ToolNotAllowedError,
  UnsupportedJsonValueError,
} from './errors/errors.js';
export { canonicalJson, type CanonicalJsonOptions } from './json/canonical-json.js';
export { defaultEffectKey, inputFingerprint } from './effects/effect-key.js';
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
export {
  applyEffect,
  resolveEffectKey,
  type EffectCall,
  type EffectEnv,
  type EffectResolution,
} from './effects/effect-protocol.js';
export {
  consoleEffectLogger,
  type EffectCallReport,
  type EffectLogger,
  type EffectOutcome,
} from './effects/effect-report.js';
export {
  createToolContext,
  guardToolContext,
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
export { defineAgent, isAgent, DEFAULT_MAX_STEPS, type Agent, type AgentDefinition } from './agent/define-agent.js';
export { wrapToolsForRun, type AllowTool, type WrapOptions } from './agent/wrap-tools-for-run.js';
export { runAgent, type AgentPrompt, type AgentRunResult, type RunAgentOptions } from './agent/run-agent.js';
export * from './strategies/index.js';
export {
  GitCommandError,
  IdempotencyKeyInProgressError,
  IdempotencyKeyReusedError,
  IdempotentRequestError,
  RemoteRefContendedError,
} from './errors/errors.js';
export {
  EffectKeyNotStorableError,
  EffectStoreOpenError,
  EffectStoreSchemaError,
  InvalidClaimRequestError,
  InvalidEffectStoreSpecError,
  MissingPeerDependencyError,
} from './errors/errors.js';
export { MAX_LEASE_MS, MAX_RETENTION_MS, MAX_TIMEOUT_MS } from './stores/store-options.js';
export { SqliteEffectStore, type SqliteEffectStoreOptions } from './stores/sqlite-effect-store.js';
export { PostgresEffectStore, type PostgresEffectStoreOptions } from './stores/postgres-effect-store.js';
export {
  DEFAULT_PG_CONNECT_TIMEOUT_MS,
  DEFAULT_PG_QUERY_TIMEOUT_MS,
  DEFAULT_PG_STATEMENT_TIMEOUT_MS,
  type PgPoolSource,
} from './stores/postgres-connection.js';
export type { PgPool, PgPoolClient, PgPoolConfig, PgQueryConfig, PgQueryResult } from './stores/postgres-types.js';
export {
  createEffectStore,
  type CreateEffectStoreOptions,
  type ManagedEffectStore,
} from './stores/create-effect-store.js';
export { parseStoreSpec, ACCEPTED_STORE_SPECS, type StoreSpec } from './stores/store-spec.js';
export { inspectEffects, type EffectInspectionRow, type ListableEffectStore } from './stores/inspect-effects.js';
export { storageKey, MAX_PLAIN_KEY_BYTES, HASHED_KEY_PREFIX } from './stores/storage-key.js';
export {
  createApprovalToken,
  verifyApprovalToken,
  type ApprovalClaims,
  type ApprovalTokenVerdict,
} from './approvals/approval-token.js';
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
