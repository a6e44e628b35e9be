// The root entry point (`@chamvi/temporal`): what an agent author writes. Effect tools and agents,
// the tool context, effect keys and markers, the in-process engine (`runAgent`), the reports a run
// gives back and the error classes user code throws or catches. It loads neither Temporal, nor
// `pg`, nor `node:sqlite`, nor `child_process`. Stores are on `@chamvi/temporal/stores`, the
// reconciliation strategies on `/strategies`, MCP tools on `/mcp`, Temporal on `/worker`,
// `/workflows`, `/client` and `/testing`.
export {
  defineEffectTool,
  type EffectTool,
  type EffectToolDefinition,
  type EffectToolHooks,
} from './effects/define-effect-tool.js';
export { defineAgent, type Agent, type AgentDefinition, type ToolLoopAgentDefinition } from './agent/define-agent.js';
export { defineAgentTool, type AgentToolOptions } from './agent/agent-tool.js';
export type { AgentSettings, AgentSettingName, AgentRuntimeContext } from './agent/agent-settings.js';
export type { ToolLoopAgentSource } from './agent/tool-loop-agent-source.js';
export type { EffectCallInfo, RunData, RunInfo, ToolContext } from './context/tool-context.js';
export { effectKeyOf, effectFenceOf } from './effects/effect-key-of.js';
export { stepIndex, type StepIndexOptions } from './effects/step-index.js';
export { defaultEffectKey, inputFingerprint } from './effects/effect-key.js';
export { effectMarker, findEffectMarkers } from './effects/effect-marker.js';
export type { EffectCallReport, EffectLogger, EffectOutcome } from './effects/effect-report.js';
export { runAgent, type AgentPrompt, type AgentRunResult, type RunAgentOptions } from './agent/run-agent.js';
// Every error of the library is a ChamviError (`ChamviError.isInstance(e)`, `e.retryable`), and its
// `name` is the failure type Temporal reports (README, "Error policy"); these two are thrown by tool code.
// An entry point exports the errors its functions throw to their callers (`ApprovalNotPendingError`
// from `/client`, `EffectStoreUnavailableError` from `/worker`).
export { ChamviError } from './errors/chamvi-error.js';
export { EffectOutcomeUnknownError, InvalidToolInputError } from './errors/errors.js';

// Types of `@chamvi/temporal/stores` that `runAgent` takes, re-exported as types (the same declarations).
export type { EffectOrigin, EffectRecord, EffectRecordInput, IEffectStore } from './stores/effect-store.js';
