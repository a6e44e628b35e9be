import type { AgentSettingName } from './agent-settings.js';

// The AI SDK 7 `ToolLoopAgentSettings` names defineAgent knows, by what it does with them. A
// compile-time check in test/core/agent-settings.test.ts fails when the installed `ai` has a
// setting none of these lists names.

/** Settings given to every model call as they are (per step, `prepareStep` may override some). */
export const PASSED_SETTINGS = [
  'toolChoice',
  'activeTools',
  'toolOrder',
  'output',
  'providerOptions',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'presencePenalty',
  'frequencyPenalty',
  'stopSequences',
  'seed',
  'reasoning',
  'headers',
  'allowSystemInMessages',
  'repairToolCall',
  'experimental_repairToolCall',
  'experimental_refineToolInput',
  'experimental_download',
  'include',
  'runtimeContext',
  'timeout',
  'maxRetries',
  'toolApproval',
] as const satisfies readonly AgentSettingName[];

/** Settings that steer the loop: functions, run in the model-step activity (workflow code cannot import them). */
export const LOOP_SETTINGS = ['stopWhen', 'prepareStep'] as const satisfies readonly AgentSettingName[];

/** The fields `defineAgent` reads itself. */
export const OWN_FIELDS = [
  'id',
  'name',
  'model',
  'instructions',
  'tools',
  'maxSteps',
  'telemetry',
  'experimental_telemetry',
  'compensateOn',
] as const;

/** Settings no durable run can honour, with what to do instead. */
export const REFUSED_SETTINGS = {
  toolsContext:
    'chamvi gives every tool the run\'s ToolContext as its context (ctx.run, ctx.state, ctx.artifacts); pass per-run data as the run\'s "state" instead.',
  toolCallConcurrency:
    "the workflow runs a step's tool calls as activities, all at once; limit concurrency with the worker's maxConcurrentActivityTaskExecutions.",
  experimental_toolCallers: 'tool callers are not supported in agent workflows.',
  experimental_toolApprovalSecret: "approvals are signed with the worker's approvalSecret (createAgentWorker).",
  callOptionsSchema: "a run has no call options; pass per-run data as the run's state (tools read it as ctx.state).",
  prepareCall: 'a run has no call options; compute per-step settings in prepareStep.',
  _internal: 'an AI SDK test hook; a durable run takes ids from Temporal.',
} as const satisfies Readonly<Record<string, string>>;

/** Callbacks: in a durable run they would run again on every activity retry (and not once per run). */
export const CALLBACK_SETTINGS = [
  'onStart',
  'experimental_onStart',
  'onStepStart',
  'experimental_onStepStart',
  'onLanguageModelCallStart',
  'onLanguageModelCallEnd',
  'onToolExecutionStart',
  'onToolExecutionEnd',
  'onStepEnd',
  'onStepError',
  'onStepFinish',
  'onError',
  'onAbort',
  'onEnd',
  'onFinish',
] as const;
