import type { UIMessageChunk } from 'ai';
import type { SettledToolCall } from '../../common/agent-progress.js';
import { toolOutputChunks } from '../../src/stream/tool-output-chunks.js';

/**
 * The tool calls of the step on the page that have no output yet, as the chunks sent say: a call
 * opens with `tool-input-available` and closes with its `tool-output-*` chunk; a new or retried
 * step (`start-step`, `reset-step`) starts the list again.
 */
export class OpenCalls {
  private readonly open = new Set<string>();

  /** Notes what `chunk` opens or closes. */
  observe(chunk: UIMessageChunk): void {
    switch (chunk.type) {
      case 'start-step':
      case 'reset-step':
        this.open.clear();
        return;
      case 'tool-input-available':
        this.open.add(chunk.toolCallId);
        return;
      case 'tool-output-available':
      case 'tool-output-error':
      case 'tool-output-denied':
        this.open.delete(chunk.toolCallId);
        return;
      default:
        return;
    }
  }

  /** The open calls other than `waiting` (the calls that wait for approval). */
  besides(waiting: ReadonlySet<string>): string[] {
    return [...this.open].filter((id) => !waiting.has(id));
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
