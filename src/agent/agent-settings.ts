import type { OutputInterface, ToolLoopAgentSettings, ToolSet } from 'ai';
import { UnsupportedAgentSettingError } from '../errors/unsupported-agent-setting-error.js';
import {
  CALLBACK_SETTINGS,
  LOOP_SETTINGS,
  OWN_FIELDS,
  PASSED_SETTINGS,
  REFUSED_SETTINGS,
} from './agent-setting-names.js';

/** The AI SDK's runtime context type (`runtimeContext`, what stop conditions and `prepareStep` see). @public */
export type AgentRuntimeContext = NonNullable<ToolLoopAgentSettings['runtimeContext']>;

/**
 * The `ToolLoopAgentSettings` (AI SDK 7) an agent keeps besides name, model, instructions, tools
 * and telemetry, with the SDK's names and meaning. They apply in the model-step activity, step by
 * step (see the README's "Agent settings" table):
 *
 * - `stopWhen`: checked before each model step after the first, on the steps so far (rebuilt from
 *   the conversation); when one is met, the run ends without calling the model.
 * - `prepareStep`: called before each model step; what it returns overrides, for that step, the
 *   model, instructions, messages, tool choice, active tools, tool order, call settings and
 *   provider options (merged).
 * - `toolChoice`, `activeTools`, `toolOrder`, `output`, `providerOptions`, the call settings
 *   (`temperature`, `maxOutputTokens`, `topP`, `topK`, `presencePenalty`, `frequencyPenalty`,
 *   `stopSequences`, `seed`, `reasoning`), `headers`, `allowSystemInMessages`, `repairToolCall`,
 *   `experimental_refineToolInput`, `experimental_download`, `include`, `runtimeContext`:
 *   passed to every model call as they are.
 * - `timeout`: only `stepMs`, `firstChunkMs`, `chunkMs` (per model call); `maxRetries`: only 0.
 * - `toolApproval`: decides which calls wait for an approval (planned in the model step, checked
 *   again in the tool's activity), where the worker's registration sets no `toolApproval` of its own.
 * @public
 */
export type AgentSettings<
  TOOLS extends ToolSet = ToolSet,
  RUNTIME_CONTEXT extends AgentRuntimeContext = AgentRuntimeContext,
  OUTPUT extends OutputInterface = OutputInterface,
> = Pick<ToolLoopAgentSettings<never, TOOLS, RUNTIME_CONTEXT, OUTPUT>, AgentSettingName>;

/** The names of the {@link AgentSettings}: the `ToolLoopAgentSettings` an agent keeps and the model step applies. @public */
export type AgentSettingName =
  | 'toolChoice'
  | 'activeTools'
  | 'toolOrder'
  | 'output'
  | 'providerOptions'
  | 'maxOutputTokens'
  | 'temperature'
  | 'topP'
  | 'topK'
  | 'presencePenalty'
  | 'frequencyPenalty'
  | 'stopSequences'
  | 'seed'
  | 'reasoning'
  | 'headers'
  | 'allowSystemInMessages'
  | 'repairToolCall'
  | 'experimental_repairToolCall'
  | 'experimental_refineToolInput'
  | 'experimental_download'
  | 'include'
  | 'runtimeContext'
  | 'timeout'
  | 'maxRetries'
  | 'toolApproval'
  | 'stopWhen'
  | 'prepareStep';

const PERMITTED_TIMEOUTS = ['stepMs', 'firstChunkMs', 'chunkMs'];

/**
 * Checks the settings of an agent definition (or a `ToolLoopAgent`'s) and returns the ones the
 * model step applies. A setting set to `undefined` counts as absent (a `ToolLoopAgent` keeps
 * `onEnd: undefined`). Throws {@link UnsupportedAgentSettingError} for a callback, a refused or
 * unknown setting, a stop condition that is not a function, `maxRetries` other than 0 and a run-wide
 * `timeout`: nothing is silently ignored.
 */
export function checkAgentSettings(
  where: string,
  given: Readonly<Record<string, unknown>>,
  /** The settings are a `ToolLoopAgent`'s (`defineAgent({ agent })`): a refusal then says how to leave the setting out. */
  fromAgent = false,
): AgentSettings {
  const settings: Record<string, unknown> = {};
  // A setting no run can have: from a ToolLoopAgent, say how to leave it out and keep the agent.
  const leaveOut = (setting: string) =>
    fromAgent
      ? ` Pass the settings the ToolLoopAgent was built from without it: defineAgent({ agent: { ...settings, ${setting}: undefined } }).`
      : '';
  const refuse = (setting: string, why: string, hint = '') =>
    new UnsupportedAgentSettingError({
      setting,
      message: `${where}: the setting "${setting}" cannot be used: ${why}${hint}`,
    });
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined || (OWN_FIELDS as readonly string[]).includes(key)) continue;
    if ((CALLBACK_SETTINGS as readonly string[]).includes(key)) {
      throw refuse(
        key,
        "callbacks would run again on every retry of a model step (and on none of the workflow's tool calls); use the agent's telemetry integrations, Temporal interceptors, or the progress query.",
        leaveOut(key),
      );
    }
    const refused = Object.hasOwn(REFUSED_SETTINGS, key)
      ? (REFUSED_SETTINGS as Readonly<Record<string, string>>)[key]
      : undefined;
    if (refused !== undefined) throw refuse(key, refused, leaveOut(key));
    if (!(PASSED_SETTINGS as readonly string[]).includes(key) && !(LOOP_SETTINGS as readonly string[]).includes(key)) {
      throw refuse(key, 'it is not an AI SDK 7 ToolLoopAgent setting chamvi knows (a typo?).');
    }
    settings[key] = value;
  }
  const stopWhen = settings['stopWhen'];
  if (stopWhen !== undefined) {
    const conditions = Array.isArray(stopWhen) ? (stopWhen as unknown[]) : [stopWhen];
    const bad = conditions.findIndex((condition) => typeof condition !== 'function');
    if (bad >= 0) {
      throw refuse(
        'stopWhen',
        `stop condition ${bad} is a ${conditions[bad] === null ? 'null' : typeof conditions[bad]}, not a function of { steps } (isStepCount(n), hasToolCall(name), or your own).`,
      );
    }
  }
  if (settings['prepareStep'] !== undefined && typeof settings['prepareStep'] !== 'function') {
    throw refuse('prepareStep', 'it must be a function of { steps, stepNumber, messages, ... }.');
  }
  if (settings['maxRetries'] !== undefined && settings['maxRetries'] !== 0) {
    throw refuse(
      'maxRetries',
      "Temporal retries a failed model step (the model step's retry policy, activityOptions.modelStep.retry); the AI SDK's own retries stay off. Remove maxRetries (or set it to 0).",
    );
  }
  const timeout = settings['timeout'];
  if (timeout !== undefined) {
    const fields = typeof timeout === 'object' && timeout !== null ? Object.keys(timeout) : undefined;
    const wrong = fields?.filter((field) => !PERMITTED_TIMEOUTS.includes(field));
    if (wrong === undefined || wrong.length > 0) {
      throw refuse(
        'timeout',
        `a run's total time and its tools' time are Temporal's (the workflow's and the activities' timeouts); only { stepMs, firstChunkMs, chunkMs } apply, to each model call (got ${wrong === undefined ? `${typeof timeout} ${JSON.stringify(timeout)}` : wrong.join(', ')}).`,
      );
    }
  }
  return Object.freeze(settings) as AgentSettings;
}
