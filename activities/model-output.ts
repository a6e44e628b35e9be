import type { Tool } from 'ai';
import type { JsonToolOutput } from '../common/index.js';

/**
 * What the model sees of a tool result, as the AI SDK makes it: the tool's `toModelOutput` when it
 * has one, else text for a string and JSON for anything else (`undefined` becomes `null`).
 */
export async function toModelOutput(
  tool: Tool,
  toolCallId: string,
  input: unknown,
  output: unknown,
): Promise<JsonToolOutput> {
  if (typeof tool.toModelOutput === 'function') {
    return await tool.toModelOutput({ toolCallId, input, output });
  }
  if (typeof output === 'string') return { type: 'text', value: output };
  return { type: 'json', value: output === undefined ? null : (JSON.parse(JSON.stringify(output)) as unknown) };
}
