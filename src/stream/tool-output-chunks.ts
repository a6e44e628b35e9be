import type { UIMessageChunk } from 'ai';
import type { ToolResultPart } from './tool-result-parts.js';

/**
 * The UI chunk that ends a tool call, from the result the model is sent for it (a tool result's
 * `output`, as the AI SDK's `toModelOutput` made it): `execution-denied` gives
 * `tool-output-denied`; `error-text` / `error-json` give `tool-output-error` (the text, or the
 * JSON as text); `text` / `json` give `tool-output-available` with their value, which
 * `convertToModelMessages` turns back into the same output; any other output (`content`, ...) is
 * sent whole as the part's output.
 */
export function toolOutputChunks(part: ToolResultPart): UIMessageChunk[] {
  const { toolCallId, output } = part;
  const typed = typeof output === 'object' && output !== null ? (output as { type?: unknown; value?: unknown }) : {};
  switch (typed.type) {
    case 'execution-denied':
      return [{ type: 'tool-output-denied', toolCallId }];
    case 'error-text':
      return [{ type: 'tool-output-error', toolCallId, errorText: String(typed.value) }];
    case 'error-json':
      return [{ type: 'tool-output-error', toolCallId, errorText: JSON.stringify(typed.value) ?? 'null' }];
    case 'text':
    case 'json':
      return [{ type: 'tool-output-available', toolCallId, output: typed.value }];
    default:
      return [{ type: 'tool-output-available', toolCallId, output }];
  }
}
