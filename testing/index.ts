// Testing kit (`@chamvi/temporal/testing`): what the library's own tests use, for yours. The
// scripted model, the local GitHub server and the Temporal binary lookup belong to the demo
// (demo/), which uses them too; the kit re-exports them.
export { scriptedModel, type ScriptedStep, type ScriptedToolCall, type ScriptEntry } from '../demo/scripted-model.js';
export {
  createDevServerEnvironment,
  createTimeSkippingEnvironment,
  type DevServerEnvironmentOptions,
} from './test-environment.js';
export { TemporalServerNotFoundError } from './temporal-server-not-found-error.js';
export { findTemporalBinary, temporalExecutable } from '../demo/temporal-binaries.js';
export * from '../demo/github/index.js';
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
