import type { UIMessageChunk } from 'ai';

/**
 * Writes a run's UI message stream to a terminal as it arrives: each step's text as its deltas
 * come, a line per tool call, and, since printed text cannot be taken back, a note when a step is
 * retried before its text starts over. Resolves when the stream ends (the run closed), with the
 * text of its `error` chunk as `stopped` when it had one.
 */
export async function printRunStream(
  stream: ReadableStream<UIMessageChunk>,
  write: (text: string) => void,
): Promise<{ printed: boolean; stopped?: string }> {
  let printed = false;
  // The text of an `error` chunk: the run failed, or the stream could not follow it.
  let stopped: string | undefined;
  let atLineStart = true;
  const out = (text: string): void => {
    if (text.length === 0) return;
    write(text);
    printed = true;
    atLineStart = text.endsWith('\n');
  };
  const newline = (): void => {
    if (!atLineStart) out('\n');
  };
  const reader = stream.getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    const chunk = next.value;
    switch (chunk.type) {
      case 'text-delta':
        out(chunk.delta);
        break;
      case 'text-end':
      case 'finish-step':
        newline();
        break;
      case 'reset-step':
        newline();
        out('[the step was retried; its text again:]\n');
        break;
      case 'error':
        stopped = chunk.errorText;
        break;
      case 'tool-input-available':
        newline();
        out(`[tool ${chunk.toolName} ${JSON.stringify(chunk.input)}]\n`);
        break;
      default:
        break;
    }
  }
  newline();
  return { printed, ...(stopped !== undefined ? { stopped } : {}) };
}
