import type { generateText, ToolSet } from 'ai';
import type { ToolContext } from '../context/tool-context.js';

/** What the AI SDK's `generateText` takes as `toolsContext` for `TOOLS`. */
export type ToolsContextOf<TOOLS extends ToolSet> = Parameters<typeof generateText<TOOLS>>[0]['toolsContext'];

/**
 * The AI SDK's `toolsContext` for `tools`: every tool's `execute` gets the run's ToolContext. The
 * SDK infers each tool's context type from its definition, which a generic `ToolSet` erases, so the
 * map is typed here (and only here) instead of casting the whole options object.
 */
export function toolsContextFor<TOOLS extends ToolSet>(tools: TOOLS, ctx: ToolContext): ToolsContextOf<TOOLS> {
  return Object.fromEntries(Object.keys(tools).map((name) => [name, ctx])) as ToolsContextOf<TOOLS>;
}
