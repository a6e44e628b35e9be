import type { LanguageModel, ToolSet } from 'ai';
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
}

/** An agent: a name, a model, instructions and tools, ready for `runAgent` or a Temporal worker. */
export type Agent<TOOLS extends ToolSet = ToolSet> = Readonly<
  Required<Omit<AgentDefinition<TOOLS>, 'instructions'>>
> & {
  readonly instructions: string | undefined;
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
    [AGENT]: true as const,
  });
}

/** Whether `value` was made by {@link defineAgent}. */
export function isAgent(value: unknown): value is Agent {
  return typeof value === 'object' && value !== null && (value as { [AGENT]?: unknown })[AGENT] === true;
}
