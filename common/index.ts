// The contract between the agent workflow and the chamvi activities: activity names, their input
// and result shapes, the effect report, activity options and their defaults. Sandbox-safe: it
// imports nothing at runtime but itself (types from the core are erased), so workflow code and
// activities import the same module.
export { ACTIVITY_NAMES, type ChamviActivityName } from './activity-names.js';
export {
  DEFAULT_MODEL_STEP_OPTIONS,
  DEFAULT_STORE_OPTIONS,
  DEFAULT_TOOL_OPTIONS,
  DEFAULT_VERIFY_APPROVAL_OPTIONS,
  mergeActivityOptions,
  toActivityOptions,
  type JsonActivityOptions,
  type ModelStepActivityOptions,
  type StoreActivityOptions,
  type ToolActivityOptions,
} from './activity-options.js';
export {
  FAILURE_CATALOGUE,
  NON_RETRYABLE_TYPES,
  failurePolicyOf,
  type CataloguedFailure,
  type FailurePolicy,
} from '../src/errors/failure-policy.js';
export type * from './activity-contract.js';
export type * from './approval-types.js';
export type * from './effect-call-report.js';
export type * from './run-effect-report.js';
export type * from './json-messages.js';
export type * from './conversation-ref.js';
export type * from './run-trace.js';
export type * from './child-run-report.js';
export type * from './run-usage.js';
