// Testing kit (`@chamvi/temporal/testing`): what the library's own tests use, for yours.
export { scriptedModel, type ScriptedStep, type ScriptedToolCall, type ScriptEntry } from './scripted-model.js';
export { createDevServerEnvironment, createTimeSkippingEnvironment } from './test-environment.js';
export { findTemporalBinary, temporalExecutable } from './temporal-binaries.js';
export * from './github/index.js';
