import type { RunStreamPart } from './run-stream-store.js';

/** A `tool-result` part of the run stream. */
export type ToolResultPart = Extract<RunStreamPart, { type: 'tool-result' }>;

/**
 * The tool results in `messages` (the `tool-result` parts of their tool messages, in order), as
 * run stream parts: what the model is sent for each call. Anything else is skipped; so is a part
 * without a string call id or tool name (a conversation written by someone else).
 */
export function toolResultParts(
  messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>,
): ToolResultPart[] {
  const out: ToolResultPart[] = [];
  for (const message of messages) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as unknown[]) {
      if (typeof part !== 'object' || part === null) continue;
      const { type, toolCallId, toolName, output } = part as Record<string, unknown>;
      if (type !== 'tool-result' || typeof toolCallId !== 'string' || typeof toolName !== 'string') continue;
      out.push({ type: 'tool-result', toolCallId, toolName, output });
    }
  }
  return out;
}
