import type { UIMessageChunk } from 'ai';
import type { AgentRunOutput } from '../../workflows/agent-loop.js';
import type { RunStreamUIState } from '../../src/stream/ui-chunks.js';
import { toolResultParts } from '../../src/stream/tool-result-parts.js';
import type { RunProgressParts } from './run-progress-parts.js';

/** How a run's UI stream ends: what {@link finishRunStream} takes. */
export interface RunStreamEnd {
  /** The closed run's status, as describe names it (`COMPLETED`, `FAILED`, ...). */
  readonly status: string;
  /** The result of the run's chain (across continue-as-new, retries and resets), no other run's. */
  readonly result: () => Promise<unknown>;
  readonly progress: RunProgressParts;
  /** Send the last effect and approval parts. */
  readonly withProgress: boolean;
  /** The workflow id names another run now: its queries would answer for that one, so none is asked. */
  readonly replaced: boolean;
  /** The stream's view: the tool results no model step wrote end their calls through it. */
  readonly ui: RunStreamUIState;
}

/**
 * The last chunks of a run's UI stream once its workflow closed: `finish` with the result's effect
 * outcomes when it completed, `error` naming the cause when it failed (and that its rollback is
 * incomplete, when a compensation kept failing), `abort` when it was cancelled, terminated or timed
 * out (with the effect parts the run's last state shows, each compensated call's `compensation` in).
 */
export async function finishRunStream(end: RunStreamEnd, emit: (chunk: UIMessageChunk) => void): Promise<void> {
  const { status, progress, withProgress } = end;
  if (status !== 'COMPLETED') {
    if (withProgress && !end.replaced) for (const chunk of await progress.poll()) emit(chunk);
    if (status === 'FAILED') {
      const reason = await end.result().then(
        () => 'failed',
        (error: unknown) => {
          const cause = (error as { cause?: { cause?: unknown; message?: string; type?: string } }).cause;
          const inner = cause?.cause instanceof Error ? cause.cause.message : cause?.message;
          // A rollback left incomplete is the news; what ended the run is its cause.
          if (cause?.type === 'RollbackIncompleteError') return `${inner ?? ''}; ${cause.message ?? ''}`;
          return inner ?? (error instanceof Error ? error.message : String(error));
        },
      );
      emit({ type: 'error', errorText: `The run failed: ${reason}` });
    } else {
      emit({ type: 'abort', reason: status.toLowerCase() });
    }
    return;
  }
  const result = (await end.result()) as AgentRunOutput;
  // Results no model step saw (the step limit, a stop condition) are in no batch: the output has them.
  for (const chunk of end.ui.toolResults(toolResultParts(result.conversation?.pending ?? []))) emit(chunk);
  // The result is the last word on effects: every call, whatever the last query saw.
  if (withProgress) {
    for (const chunk of progress.effects(result.effects)) emit(chunk);
    for (const chunk of progress.approvals([])) emit(chunk);
  }
  emit({ type: 'finish', finishReason: result.steps.at(-1)?.finishReason === 'stop' ? 'stop' : 'other' });
}
