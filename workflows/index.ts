// Workflow-safe entry point (`@chamvi/temporal/workflows`): import it from workflow code. It
// imports nothing from Node, `ai` or `zod`, and reaches activities by type only.
export { agentWorkflow, type AgentWorkflowInput } from './agent-workflow.js';
export {
  runAgentLoop,
  type AgentCheckpoint,
  type AgentLoopOptions,
  type AgentRunOutput,
  type StepSummary,
} from './agent-loop.js';
export { agentProgressQuery, type AgentProgress } from '../common/agent-progress.js';
export {
  ApprovalGate,
  approvalDecisionSignal,
  decideApprovalUpdate,
  pendingApprovalsQuery,
  DEFAULT_APPROVAL_TIMEOUT,
} from './approvals.js';
export {
  DEFAULT_MODEL_STEP_OPTIONS,
  DEFAULT_STORE_OPTIONS,
  DEFAULT_TOOL_OPTIONS,
  DEFAULT_VERIFY_APPROVAL_OPTIONS,
  mergeActivityOptions,
  toActivityOptions,
} from '../common/activity-options.js';
export {
  FAILURE_CATALOGUE,
  NON_RETRYABLE_TYPES,
  failurePolicyOf,
  type CataloguedFailure,
  type FailurePolicy,
} from '../src/errors/failure-policy.js';
export {
  effectToolCalls,
  type CallOptionsLike,
  type EffectToolCalls,
  type EffectToolCallsOptions,
} from './effect-tool-calls.js';
export { ACTIVITY_NAMES, type ChamviActivityName } from '../common/activity-names.js';
export type * from '../common/index.js';
