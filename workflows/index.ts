// Workflow-safe entry point (`@chamvi/temporal/workflows`): import it from workflow code. It
// imports nothing from Node, `ai` or `zod`, and reaches activities by type only. It declares the
// agent workflow's interface: its input, its output and the report shapes in them, which
// `@chamvi/temporal/client` re-exports as types.
export { agentWorkflow, type AgentWorkflowInput } from './agent-workflow.js';
export {
  runAgentLoop,
  type AgentCheckpoint,
  type AgentLoopOptions,
  type AgentRunOutput,
  type StepSummary,
} from './agent-loop.js';
export {
  effectToolCalls,
  type CallOptionsLike,
  type EffectToolCalls,
  type EffectToolCallsOptions,
} from './effect-tool-calls.js';
export { rollbackWorkflow, type RollbackOutput, type RollbackWorkflowInput } from './rollback-workflow.js';
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

// Types of the root entry point in the reports above, re-exported as types (the same declarations).
export type { EffectCallReport, EffectOutcome } from '../src/effects/effect-report.js';
