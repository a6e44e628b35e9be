import type { RunStreamKey, RunStreamPart, RunStreamWriterRef } from '../../src/stream/run-stream-store.js';

/** One batch the store committed, as the simulator saw it go in. */
export interface CommittedBatch {
  /** Position in the order of commits (all runs), from 0. */
  readonly index: number;
  readonly ref: RunStreamWriterRef;
  /** The workflow whose execution wrote it. */
  readonly workflow: string;
  /** The cursor the store gave it. */
  readonly cursor: number;
  /** The tokens of its parts, in order (every pushed part carries one, unique in the history). */
  readonly tokens: readonly string[];
  /** Tokens of its text deltas (what a page shows). */
  readonly textTokens: readonly string[];
  readonly at: number;
  /** The store's answer was lost on the way back (the writer took the append for failed and sends its parts again). */
  readonly answerLost: boolean;
}

/** The tokens in `value` (parts, a batch, a chunk, a string), in order. */
export function tokensIn(value: unknown): string[] {
  const out: string[] = [];
  collect(value, out);
  return out;
}

function collect(value: unknown, out: string[]): void {
  if (typeof value === 'string') {
    for (let at = value.indexOf('⟦'); at !== -1; at = value.indexOf('⟦', at + 1)) {
      const end = value.indexOf('⟧', at);
      if (end === -1) return;
      out.push(value.slice(at + 1, end));
    }
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) collect(item, out);
  }
}

/** The token text of part `n` of `attempt` (`W1/E1/s0/a1`). */
export function token(attempt: string, n: number | string): string {
  return `⟦${attempt}#${n}⟧`;
}

/** One stream's identity as text (its run id, workflow id and first execution run id). */
export function streamOf(key: RunStreamKey): string {
  return `${key.runId} · ${key.workflowId} · ${key.firstExecutionRunId}`;
}

/** The workflow an execution id belongs to (`W1/E2` → `W1`). */
export function workflowOf(execution: string): string {
  return execution.split('/')[0] ?? execution;
}

/**
 * Every batch the stream store committed, in commit order, and the cursors it gave. A reader's
 * batch is matched back to its commit by its tokens (a batch committed twice, its first answer
 * lost and its parts sent again, has two commits).
 */
export class StreamLedger {
  readonly batches: CommittedBatch[] = [];
  /** Cursors that did not grow, by stream. */
  readonly shrunk: Array<{
    readonly stream: string;
    readonly before: number;
    readonly cursor: number;
    readonly at: number;
  }> = [];
  private readonly lastCursor = new Map<string, number>();
  private readonly byTokens = new Map<string, CommittedBatch[]>();

  commit(
    ref: RunStreamWriterRef,
    parts: readonly RunStreamPart[],
    cursor: number,
    at: number,
    answerLost = false,
  ): CommittedBatch {
    const tokens = tokensIn(parts);
    const textTokens = tokensIn(parts.filter((p) => p.type === 'text-delta'));
    const batch = {
      index: this.batches.length,
      ref,
      workflow: workflowOf(ref.execution),
      cursor,
      tokens,
      textTokens,
      at,
      answerLost,
    };
    this.batches.push(batch);
    const key = tokens.join(',');
    this.byTokens.set(key, [...(this.byTokens.get(key) ?? []), batch]);
    const stream = streamOf(ref);
    const before = this.lastCursor.get(stream);
    if (before !== undefined && cursor <= before) this.shrunk.push({ stream, before, cursor, at });
    this.lastCursor.set(stream, Math.max(before ?? 0, cursor));
    return batch;
  }

  /** The commits holding exactly `tokens` (usually one). */
  commitsOf(tokens: readonly string[]): readonly CommittedBatch[] {
    return this.byTokens.get(tokens.join(',')) ?? [];
  }
}
