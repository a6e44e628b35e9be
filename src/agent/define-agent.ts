import type { Instructions, LanguageModel, OutputInterface, TelemetryOptions, ToolSet } from 'ai';
import { assertNoStrayHooks } from '../effects/define-effect-tool.js';
import { checkAgentSettings, type AgentRuntimeContext, type AgentSettings } from './agent-settings.js';
import { toolLoopAgentSettings, type ToolLoopAgentSource } from './tool-loop-agent-source.js';

const AGENT = Symbol.for('@chamvi/temporal/agent');

/**
 * What {@link defineAgent} takes: a name, and AI SDK 7's `ToolLoopAgentSettings` (the same names
 * and meaning; see {@link AgentSettings} for where each one runs). Callbacks (`onStepFinish`,
 * `onEnd`, ...) and the settings Temporal owns are refused with an `UnsupportedAgentSettingError`.
 * @public
 */
export interface AgentDefinition<
  TOOLS extends ToolSet = ToolSet,
  RUNTIME_CONTEXT extends AgentRuntimeContext = AgentRuntimeContext,
  OUTPUT extends OutputInterface = OutputInterface,
> extends AgentSettings<TOOLS, RUNTIME_CONTEXT, OUTPUT> {
  /** Unique name; Temporal workers register agents by it and workflows start them by it. */
  readonly name: string;
  /** The AI SDK language model (a provider model object, or a gateway model id string). */
  readonly model: LanguageModel;
  /** System instructions sent with every model step (a string, or system messages). */
  readonly instructions?: Instructions;
  /** The agent's tools; effect tools among them run the effect protocol on every call. */
  readonly tools?: TOOLS;
  /**
   * Upper bound on model steps per run: `isStepCount(maxSteps)`, checked in the workflow.
   * Default 20, or no bound when `stopWhen` is set (as `ToolLoopAgent`, whose default `stopWhen`
   * is `isStepCount(20)`). `Infinity`: no bound.
   */
  readonly maxSteps?: number;
  /**
   * The AI SDK's telemetry settings for every model call of the agent (`generateText`'s
   * `telemetry`, called `experimental_telemetry` before AI SDK 7): `functionId`, `isEnabled`,
   * `recordInputs`/`recordOutputs`, per-call `integrations`. Model spans then reach the
   * integrations registered with `registerTelemetry` (the OpenTelemetry one of `@ai-sdk/otel`)
   * or the ones given here. Default: none (the AI SDK's defaults).
   */
  readonly telemetry?: TelemetryOptions;
  /** AI SDK 6's name of {@link telemetry}; used when `telemetry` is not set. @deprecated Use `telemetry`. */
  readonly experimental_telemetry?: TelemetryOptions;
  /**
   * When the agent's runs undo their applied effects themselves (each effect tool's `compensate`,
   * last applied first): `'failure'`, `'cancel'`. A run's own `compensateOn` wins. Default: never.
   * @beta
   */
  readonly compensateOn?: ReadonlyArray<'failure' | 'cancel'>;
  /** A `ToolLoopAgent`'s `id`: the name when `name` is not given (settings objects spread in carry it). */
  readonly id?: string;
}

/**
 * What {@link defineAgent} takes to run an existing AI SDK agent: a `ToolLoopAgent` (or the
 * settings object it was made from) and, unless the agent has an `id`, a name.
 * @public
 */
export interface ToolLoopAgentDefinition<
  TOOLS extends ToolSet = ToolSet,
  RUNTIME_CONTEXT extends AgentRuntimeContext = AgentRuntimeContext,
  OUTPUT extends OutputInterface = OutputInterface,
> {
  /** Default: the agent's `id`. */
  readonly name?: string;
  /** The `ToolLoopAgent`, or its settings object; its settings are checked as {@link AgentDefinition}'s. */
  readonly agent: ToolLoopAgentSource<TOOLS, RUNTIME_CONTEXT, OUTPUT>;
  /** As {@link AgentDefinition.maxSteps}. */
  readonly maxSteps?: number;
}

/** An agent: a name, a model, instructions, tools and settings, ready for `runAgent` or a Temporal worker. @public */
export interface Agent<TOOLS extends ToolSet = ToolSet> {
  /** The name workers register it by and runs start it by. */
  readonly name: string;
  /** Its language model (a step's `prepareStep` may pick another). */
  readonly model: LanguageModel;
  /** Its system instructions, sent with every model step. */
  readonly instructions: Instructions | undefined;
  /** Its tools (frozen); effect tools among them run the effect protocol. */
  readonly tools: TOOLS;
  /** The step bound: `Infinity` when there is none (`stopWhen` set without `maxSteps`). */
  readonly maxSteps: number;
  /** The AI SDK telemetry settings of its model calls (`telemetry`, or `experimental_telemetry`). */
  readonly telemetry?: TelemetryOptions;
  /** When its runs undo their applied effects, unless a run says otherwise (see {@link AgentDefinition.compensateOn}). @beta */
  readonly compensateOn?: ReadonlyArray<'failure' | 'cancel'>;
  /**
   * Its other `ToolLoopAgent` settings, checked (typed for any tool set: the model step calls them
   * with this agent's steps).
   */
  readonly settings: AgentSettings;
  /** Brands a `defineAgent` result, which workers and `runAgent` check for. */
  readonly [AGENT]: true;
}

/** Default upper bound on model steps per run (when `stopWhen` is not set either). */
export const DEFAULT_MAX_STEPS = 20;

/**
 * Defines an agent, from AI SDK 7 agent settings or from an existing `ToolLoopAgent`:
 * `defineAgent({ name, model, instructions, tools, stopWhen, prepareStep, output, ... })`, or
 * `defineAgent({ name, agent: toolLoopAgent })` for the same agent as a durable workflow.
 *
 * The definition is checked at once: a missing name or model, a bad `maxSteps` or a tool that is
 * not an object throws a `TypeError` naming the field; a tool that has `effectKey`/`alreadyApplied`
 * but is not an effect tool (it lost the brand) throws an `InvalidEffectToolError` naming the tool;
 * a setting chamvi cannot honour (a callback, `maxRetries`, `toolsContext`, a stop condition that
 * is not a function, an unknown name) throws an `UnsupportedAgentSettingError` naming the setting.
 * @public
 */
export function defineAgent<
  TOOLS extends ToolSet = ToolSet,
  RUNTIME_CONTEXT extends AgentRuntimeContext = AgentRuntimeContext,
  OUTPUT extends OutputInterface = OutputInterface,
>(
  definition: AgentDefinition<TOOLS, RUNTIME_CONTEXT, OUTPUT> | ToolLoopAgentDefinition<TOOLS, RUNTIME_CONTEXT, OUTPUT>,
): Agent<TOOLS> {
  const given = resolveDefinition(definition);
  const name = given['name'] ?? given['id'];
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(name)) {
    throw new TypeError(
      `defineAgent: name must be a non-empty string of letters, digits, '_', '.', '-' (got ${JSON.stringify(name)}).`,
    );
  }
  const where = `defineAgent("${name}")`;
  const model = given['model'] as LanguageModel | undefined;
  if (model === undefined || model === null)
    throw new TypeError(`${where}: model is missing; pass an AI SDK language model.`);
  const maxSteps = given['maxSteps'] as number | undefined;
  if (maxSteps !== undefined && maxSteps !== Infinity && (!Number.isInteger(maxSteps) || maxSteps < 1)) {
    throw new TypeError(`${where}: maxSteps must be a positive integer or Infinity (got ${String(maxSteps)}).`);
  }
  const compensateOn = compensateOnOf(where, given['compensateOn']);
  const tools = (given['tools'] ?? {}) as TOOLS;
  for (const [toolName, tool] of Object.entries(tools)) {
    if (typeof tool !== 'object' || tool === null) {
      throw new TypeError(
        `${where}: tool "${toolName}" is not a tool object; define it with tool() or defineEffectTool().`,
      );
    }
    assertNoStrayHooks(toolName, tool, where);
  }
  const settings = checkAgentSettings(where, given, 'agent' in definition && definition.agent !== undefined);
  const telemetry = (given['telemetry'] ?? given['experimental_telemetry']) as TelemetryOptions | undefined;
  return Object.freeze({
    name,
    model,
    instructions: given['instructions'] as Instructions | undefined,
    tools: Object.freeze({ ...tools }),
    // As ToolLoopAgent: its default stop condition is isStepCount(20), which a stopWhen replaces.
    maxSteps: maxSteps ?? (settings.stopWhen !== undefined ? Infinity : DEFAULT_MAX_STEPS),
    ...(telemetry !== undefined ? { telemetry } : {}),
    ...(compensateOn !== undefined ? { compensateOn } : {}),
    settings,
    [AGENT]: true as const,
  });
}

/** The definition's fields, with a `ToolLoopAgent`'s settings in place of `agent` (the definition's own name and maxSteps win). */
function resolveDefinition(definition: object): Readonly<Record<string, unknown>> {
  if (!('agent' in definition) || definition.agent === undefined) return definition as Record<string, unknown>;
  const { agent, ...own } = definition as ToolLoopAgentDefinition & Record<string, unknown>;
  const label = typeof own['name'] === 'string' ? `defineAgent("${own['name']}")` : 'defineAgent';
  const extra = Object.keys(own).filter((key) => key !== 'name' && key !== 'maxSteps');
  if (extra.length > 0) {
    throw new TypeError(
      `${label}: with agent, only name and maxSteps may be given (got ${extra.join(', ')}); set the others on the ToolLoopAgent.`,
    );
  }
  const settings = toolLoopAgentSettings(label, agent);
  const rest = Object.fromEntries(Object.entries(own).filter(([, value]) => value !== undefined));
  return { ...settings, ...rest };
}

/** `compensateOn` checked: a list of `'failure'` and `'cancel'`, frozen, or `undefined`. */
function compensateOnOf(where: string, value: unknown): ReadonlyArray<'failure' | 'cancel'> | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => v !== 'failure' && v !== 'cancel')) {
    throw new TypeError(
      `${where}: compensateOn must be a list of 'failure' and 'cancel' (got ${JSON.stringify(value)}).`,
    );
  }
  return Object.freeze([...(value as Array<'failure' | 'cancel'>)]);
}

/** Whether `value` was made by {@link defineAgent}. */
export function isAgent(value: unknown): value is Agent {
  return typeof value === 'object' && value !== null && (value as { [AGENT]?: unknown })[AGENT] === true;
}
