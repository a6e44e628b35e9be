import type { LanguageModel, TelemetryOptions, ToolSet } from 'ai';
import { assertNoStrayHooks } from '../effects/define-effect-tool.js';

const AGENT = Symbol.for('@chamvi/temporal/agent');

/** What {@link defineAgent} takes. */
export interface AgentDefinition<TOOLS extends ToolSet = ToolSet> {
  /** Unique name; Temporal workers register agents by it and workflows start them by it. */
  readonly name: string;
  /** The AI SDK language model (a provider model object, or a gateway model id string). */
  readonly model: LanguageModel;
  /** System instructions sent with every model step. */
  readonly instructions?: string;
  /** The agent's tools; effect tools among them run the effect protocol on every call. */
  readonly tools?: TOOLS;
  /** Upper bound on model steps per run. Default 20. */
  readonly maxSteps?: number;
  /**
   * The AI SDK's telemetry settings for every model call of the agent (`generateText`'s
   * `telemetry`, called `experimental_telemetry` before AI SDK 7): `functionId`, `isEnabled`,
   * `recordInputs`/`recordOutputs`, per-call `integrations`. Model spans then reach the
   * integrations registered with `registerTelemetry` (the OpenTelemetry one of `@ai-sdk/otel`)
   * or the ones given here. Default: none (the AI SDK's defaults).
   */
  readonly telemetry?: TelemetryOptions;
  /** @deprecated AI SDK 6's name of {@link telemetry}; used when `telemetry` is not set. */
  readonly experimental_telemetry?: TelemetryOptions;
}

/** An agent: a name, a model, instructions and tools, ready for `runAgent` or a Temporal worker. */
export type Agent<TOOLS extends ToolSet = ToolSet> = Readonly<
  Required<Omit<AgentDefinition<TOOLS>, 'instructions' | 'telemetry' | 'experimental_telemetry'>>
> & {
  readonly instructions: string | undefined;
  /** The AI SDK telemetry settings of its model calls (`telemetry`, or `experimental_telemetry`). */
  readonly telemetry?: TelemetryOptions;
  readonly [AGENT]: true;
};

/** Default upper bound on model steps per run. */
export const DEFAULT_MAX_STEPS = 20;

/**
 * Defines an agent. The definition is checked at once: a missing name or model, a bad
 * `maxSteps` or a tool that is not an object throws a `TypeError` naming the field; a tool that
 * has `effectKey`/`alreadyApplied` but is not an effect tool (it lost the brand) throws an
 * `InvalidEffectToolError` naming the tool.
 */
export function defineAgent<TOOLS extends ToolSet = ToolSet>(definition: AgentDefinition<TOOLS>): Agent<TOOLS> {
  const { name, model, instructions, tools, maxSteps } = definition;
  const telemetry = definition.telemetry ?? definition.experimental_telemetry;
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(name)) {
    throw new TypeError(
      `defineAgent: name must be a non-empty string of letters, digits, '_', '.', '-' (got ${JSON.stringify(name)}).`,
    );
  }
  if (model === undefined || model === null)
    throw new TypeError(`defineAgent("${name}"): model is missing; pass an AI SDK language model.`);
  if (maxSteps !== undefined && (!Number.isInteger(maxSteps) || maxSteps < 1)) {
    throw new TypeError(`defineAgent("${name}"): maxSteps must be a positive integer (got ${String(maxSteps)}).`);
  }
  for (const [toolName, tool] of Object.entries(tools ?? {})) {
    if (typeof tool !== 'object' || tool === null) {
      throw new TypeError(
        `defineAgent("${name}"): tool "${toolName}" is not a tool object; define it with tool() or defineEffectTool().`,
      );
    }
    assertNoStrayHooks(toolName, tool, `defineAgent("${name}")`);
  }
  return Object.freeze({
    name,
    model,
    instructions,
    tools: Object.freeze({ ...(tools ?? {}) }) as TOOLS,
    maxSteps: maxSteps ?? DEFAULT_MAX_STEPS,
    ...(telemetry !== undefined ? { telemetry } : {}),
    [AGENT]: true as const,
  });
}

/** Whether `value` was made by {@link defineAgent}. */
export function isAgent(value: unknown): value is Agent {
  return typeof value === 'object' && value !== null && (value as { [AGENT]?: unknown })[AGENT] === true;
}
