// The UI view of a run stream across workflow executions (continue-as-new, a reset, a workflow
// retry): a batch of an execution the view has already moved past comes from a zombie attempt of
// that execution (its activity still running when the next execution began) and is dropped, as a
// zombie attempt of a replaced attempt is within one execution; it must not open a step of its
// own between the new execution's steps. Which execution is the newer comes from the execution
// order (Temporal's start of each run), not from which wrote first: a reset's old branch whose
// first batch lands after the new execution's is dropped, and an execution the order does not
// know (a planted row) never hides one it knows.
import { describe, expect, it } from '@jest/globals';
import type { UIMessage, UIMessageChunk } from 'ai';
import type { RunStreamBatch } from '../../src/stream/run-stream-store.js';
import { RunStreamUIState } from '../../src/stream/ui-chunks.js';
import { finalMessage } from './fixtures/final-message.js';

const batch = (
  cursor: number,
  execution: string,
  step: number,
  attempt: number,
  deltas: string[],
  end = false,
): RunStreamBatch => ({
  runId: 'r',
  workflowId: 'wf',
  firstExecutionRunId: 'exec-aaaa-1',
  cursor,
  step,
  attempt,
  execution,
  parts: [
    ...deltas.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
    ...(end ? [{ type: 'step-end' as const, finishReason: 'stop' }] : []),
  ],
});

const texts = (m: UIMessage | undefined): string[] =>
  m?.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])) ?? [];

describe('the UI view of a run stream across executions', () => {
  it("drops a zombie attempt of an earlier execution's step that writes after the next execution began", async () => {
    const ui = new RunStreamUIState();
    const chunks: UIMessageChunk[] = [{ type: 'start' }];
    for (const b of [
      batch(1, 'exec-aaaa-1', 4, 1, ['Half']), // attempt 1 of step 4 times out, keeps running
      batch(2, 'exec-aaaa-1', 4, 2, ['Four'], true), // its retry completes; the workflow continues as new
      batch(3, 'exec-bbbb-2', 5, 1, ['Fi']), // step 5 under the new execution
      batch(4, 'exec-aaaa-1', 4, 1, [' (zombie)'], true), // the zombie of step 4 still writes
      batch(5, 'exec-bbbb-2', 5, 1, ['ve'], true),
    ])
      chunks.push(...ui.batch(b));
    chunks.push(...ui.endStep(), { type: 'finish' });
    expect(chunks.filter((c) => c.type === 'start-step')).toHaveLength(2);
    expect(texts(await finalMessage(chunks))).toEqual(['Four', 'Five']);
  });

  it('shows the steps of a new execution (a reset to an earlier step) after what was shown', async () => {
    const ui = new RunStreamUIState();
    const chunks: UIMessageChunk[] = [{ type: 'start' }];
    for (const b of [
      batch(1, 'exec-aaaa-1', 0, 1, ['One'], true),
      batch(2, 'exec-aaaa-1', 1, 1, ['Two'], true),
      batch(3, 'exec-cccc-3', 1, 1, ['Again'], true), // the reset's branch restarts at step 1
    ])
      chunks.push(...ui.batch(b));
    chunks.push({ type: 'finish' });
    expect(texts(await finalMessage(chunks))).toEqual(['One', 'Two', 'Again']);
  });

  // The old branch's attempt began before the reset and writes on; the new execution started at the reset.
  const started = new Map([
    ['exec-aaaa-1', 1_000],
    ['exec-bbbb-2', 5_000],
  ]);
  const order = (execution: string) => started.get(execution);
  const replay = async (ui: RunStreamUIState, batches: readonly RunStreamBatch[]): Promise<UIMessage | undefined> => {
    const chunks: UIMessageChunk[] = [{ type: 'start' }];
    for (const b of batches) chunks.push(...ui.batch(b));
    chunks.push(...ui.endStep(), { type: 'finish' });
    return finalMessage(chunks);
  };

  it("shows a reset's new execution whole when the old branch's first batch lands after the new one's", async () => {
    const message = await replay(new RunStreamUIState(undefined, order), [
      batch(1, 'exec-bbbb-2', 0, 1, ['The new']), // the reset's execution writes first
      batch(2, 'exec-aaaa-1', 0, 1, ['Old branch']), // the old branch's attempt, writing on
      batch(3, 'exec-bbbb-2', 0, 1, [' branch.']),
      batch(4, 'exec-aaaa-1', 0, 1, [' text.'], true),
      batch(5, 'exec-bbbb-2', 0, 1, [' Done.'], true),
    ]);
    expect(texts(message)).toEqual(['The new branch. Done.']);
  });

  it("shows the old branch's text until the reset's first batch, then only the new execution's", async () => {
    const message = await replay(new RunStreamUIState(undefined, order), [
      batch(1, 'exec-aaaa-1', 0, 1, ['Old']),
      batch(2, 'exec-bbbb-2', 0, 1, ['New']),
      batch(3, 'exec-aaaa-1', 0, 1, [' and more'], true),
      batch(4, 'exec-bbbb-2', 0, 1, [' text.'], true),
    ]);
    expect(texts(message)).toEqual(['Old', 'New text.']);
  });

  it('never lets an execution the order does not know (a planted row) hide the text of one it knows', async () => {
    const message = await replay(new RunStreamUIState(undefined, order), [
      batch(1, 'made-up', 7, 1, ['Planted first']),
      batch(2, 'exec-bbbb-2', 0, 1, ['Real']),
      batch(3, 'made-up-too', 99, 1, ['Planted later'], true),
      batch(4, 'made-up', 8, 1, ['Planted again'], true),
      batch(5, 'exec-bbbb-2', 0, 1, [' text.'], true),
    ]);
    // A row planted before anything real is shown (rows are not signed); nothing planted hides the real text.
    expect(texts(message)).toEqual(['Planted first', 'Real text.']);
  });
});
