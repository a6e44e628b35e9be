import type { UIMessageChunk } from 'ai';
import type { SettledToolCall } from '../../common/agent-progress.js';
import { toolOutputChunks } from '../../src/stream/tool-output-chunks.js';

/**
 * The tool calls of the step on the page that have no output yet, as the chunks sent say: a call
 * opens with `tool-input-available` and closes with its `tool-output-*` chunk (not a preliminary one); a new or retried
 * step (`start-step`, `reset-step`) starts the list again.
 */
export class OpenCalls {
  /** The open calls, with their tool and input. */
  private readonly open = new Map<string, { readonly toolName: string; readonly input: unknown }>();

  /** Notes what `chunk` opens or closes. */
  observe(chunk: UIMessageChunk): void {
    switch (chunk.type) {
      case 'start-step':
      case 'reset-step':
        this.open.clear();
        return;
      case 'tool-input-available':
        this.open.set(chunk.toolCallId, { toolName: chunk.toolName, input: chunk.input });
        return;
      case 'tool-output-available':
        // A preliminary output (a sub-agent's text so far) leaves the call open.
        if (chunk.preliminary !== true) this.open.delete(chunk.toolCallId);
        return;
      case 'tool-output-error':
      case 'tool-output-denied':
        this.open.delete(chunk.toolCallId);
        return;
      default:
        return;
    }
  }

  /** Whether `toolCallId` is a call of the step on the page without its output yet. */
  isOpen(toolCallId: string): boolean {
    return this.open.has(toolCallId);
  }

  /** The tool and input of open call `toolCallId`. */
  call(toolCallId: string): { readonly toolName: string; readonly input: unknown } | undefined {
    return this.open.get(toolCallId);
  }

  /** The open calls. */
  ids(): string[] {
    return [...this.open.keys()];
  }

  /** The open calls other than `waiting` (the calls that wait for approval). */
  besides(waiting: ReadonlySet<string>): string[] {
    return [...this.open.keys()].filter((id) => !waiting.has(id));
  }

  /**
   * The output chunks of the calls in `settled` that are open here, other than `waiting`: the ones
   * that ended while a call of their step waits for approval (the run sends their results to the
   * model only once every call of the step ended).
   */
  outputs(settled: readonly SettledToolCall[], waiting: ReadonlySet<string>): UIMessageChunk[] {
    const open = new Set(this.besides(waiting));
    return settled
      .filter((call) => open.has(call.toolCallId))
      .flatMap((call) => toolOutputChunks({ type: 'tool-result', ...call }));
  }
}
