// Testing kit (`@chamvi/temporal/testing`): what the library's own tests use, for yours.
export { scriptedModel, type ScriptedStep, type ScriptedToolCall, type ScriptEntry } from './scripted-model.js';
export { createDevServerEnvironment, createTimeSkippingEnvironment } from './test-environment.js';
export { findTemporalBinary, temporalExecutable } from './temporal-binaries.js';
export * from './github/index.js';
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
  runAll,
  summarizeActivities,
  type ActivitySummary,
  type AgentTestRun,
  type RunAgentUnderTestOptions,
} from './run-agent-under-test.js';
