// The UI view of a run stream across workflow executions (continue-as-new, a reset, a workflow
// retry): a batch of an execution the view has already moved past comes from a zombie attempt of
// that execution (its activity still running when the next execution began) and is dropped, as a
// zombie attempt of a replaced attempt is within one execution; it must not open a step of its
// own between the new execution's steps.
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
});
