import type { OutputInterface, ToolLoopAgent, ToolLoopAgentSettings, ToolSet } from 'ai';
import { UnsupportedAgentSettingError } from '../errors/unsupported-agent-setting-error.js';
import type { AgentRuntimeContext } from './agent-settings.js';

/** An AI SDK `ToolLoopAgent`, or the settings object one is made from (without `toolsContext`: a run gives every tool its `ToolContext`). @public */
export type ToolLoopAgentSource<
  TOOLS extends ToolSet = ToolSet,
  RUNTIME_CONTEXT extends AgentRuntimeContext = AgentRuntimeContext,
  OUTPUT extends OutputInterface = OutputInterface,
> =
  | ToolLoopAgent<never, TOOLS, RUNTIME_CONTEXT, OUTPUT>
  // Without toolsContext: the SDK's type requires it for tools that read a context (effect tools
  // read the run's ToolContext, which the run gives them), and chamvi refuses one.
  | Omit<ToolLoopAgentSettings<never, TOOLS, RUNTIME_CONTEXT, OUTPUT>, 'toolsContext'>;

/**
 * The settings of a `ToolLoopAgent`, or the settings object itself.
 *
 * `ToolLoopAgent` has no public accessor for its settings (AI SDK 7.0 keeps them in a field its
 * types mark `private`, `settings`, copied from the constructor's argument with `onEnd` added). It
 * is read from there, checked to be an object with a model; should a later AI SDK keep them
 * elsewhere, this throws {@link UnsupportedAgentSettingError} saying to pass the settings object
 * (`defineAgent({ name, agent: settings })`), which is the supported form whatever the version.
 */
export function toolLoopAgentSettings(where: string, source: unknown): Readonly<Record<string, unknown>> {
  if (typeof source !== 'object' || source === null) {
    throw new UnsupportedAgentSettingError({
      setting: 'agent',
      message: `${where}: agent must be an AI SDK ToolLoopAgent or its settings object (got ${source === null ? 'null' : typeof source}).`,
    });
  }
  if (!isAgentInstance(source)) return source as Record<string, unknown>;
  const settings = (source as { settings?: unknown }).settings;
  if (typeof settings !== 'object' || settings === null || !('model' in settings)) {
    throw new UnsupportedAgentSettingError({
      setting: 'agent',
      message: `${where}: this ToolLoopAgent does not show its settings where AI SDK 7.0 keeps them; pass the settings object you built it from instead: defineAgent({ name, agent: settings }).`,
    });
  }
  return settings;
}

/** A `ToolLoopAgent` (or another AI SDK `Agent`), told by its interface, not `instanceof` (another copy of `ai` may have made it). */
function isAgentInstance(value: object): boolean {
  const candidate = value as { version?: unknown; generate?: unknown; stream?: unknown };
  return (
    typeof candidate.version === 'string' &&
    typeof candidate.generate === 'function' &&
    typeof candidate.stream === 'function'
  );
}
