// Testing kit (`@chamvi/temporal/testing`): what the library's own tests use, for yours. A scripted
// model, Temporal test environments that find the server binaries without downloading, agent
// runs on the time-skipping server, fault injection in effect calls and a flaky store.
export { scriptedModel, type ScriptedStep, type ScriptedToolCall, type ScriptEntry } from './scripted-model.js';
export {
  createDevServerEnvironment,
  createTimeSkippingEnvironment,
  type DevServerEnvironmentOptions,
} from './test-environment.js';
export { findTemporalBinary } from './temporal-binaries.js';
export {
  FAULT_POINTS,
  FaultInjector,
  InjectedFault,
  type FaultHit,
  type FaultMode,
  type FaultPoint,
  type FaultRule,
} from './fault-injector.js';
export type { FaultyToolOptions } from './faulty-tools.js';
export { FlakyEffectStore, StoreHiccup, type FlakyStoreOptions, type StoreOperation } from './flaky-store.js';
export {
  runAgentUnderTest,
  type ActivitySummary,
  type AgentTestRun,
  type RunAgentUnderTestOptions,
} from './run-agent-under-test.js';

// Types of other entry points that this one's functions take or return, re-exported as types (the
// same declarations): agents and the tool context (the root), registrations (`/worker`), stores
// (`/stores`), a run's start options and output (`/client`, `/workflows`).
export type { Agent } from '../src/agent/define-agent.js';
export type { AgentSettings, AgentSettingName, AgentRuntimeContext } from '../src/agent/agent-settings.js';
export type { EffectCallInfo, RunData, RunInfo, ToolContext } from '../src/context/tool-context.js';
export type { AgentEntry, AgentRegistration } from '../activities/agent-registry.js';
export type {
  ApprovalStatus,
  ToolApprovalCallOptions,
  ToolApprovalRule,
  ToolApprovalSettings,
} from '../src/approvals/approval-policy.js';
export type {
  ClaimRequest,
  ClaimResult,
  ClaimToken,
  EffectClaims,
  EffectOrigin,
  EffectRecord,
  EffectRecordInput,
  FencedResult,
  IEffectStore,
} from '../src/stores/effect-store.js';
export type { AppendConversationOptions, ConversationStore } from '../src/stores/conversation-store.js';
export type { ConversationWriteOrder } from '../src/stores/conversation-write-order.js';
export type { ConversationEntry } from '../src/conversation/conversation-entry.js';
export type { AgentRunStartOptions, StartAgentRunOptions } from '../client/start-agent-run.js';
export type { AgentWorkflowInput } from '../workflows/agent-workflow.js';
export type { AgentCheckpoint, AgentLoopOptions, AgentRunOutput, StepSummary } from '../workflows/agent-loop.js';
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
export type { JsonMessage } from '../common/json-messages.js';
export type { RunTrace, RunTraceContext, RunTraceStep } from '../common/run-trace.js';
export type {
  JsonActivityOptions,
  ModelStepActivityOptions,
  StoreActivityOptions,
  ToolActivityOptions,
} from '../common/activity-options.js';
export type { EffectCallReport, EffectOutcome } from '../src/effects/effect-report.js';
