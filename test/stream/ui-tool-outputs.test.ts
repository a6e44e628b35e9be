// How RunStreamUIState ends tool calls, read by the AI SDK's own readUIMessageStream: a result
// becomes output-available / output-error / output-denied; an approval request that arrives before
// its call is shown waits for it (the SDK's reader fails on a chunk for an unknown call); a call
// known to have needed approval replays approval-requested, then its verdict and its output.
import { describe, expect, it } from '@jest/globals';
import type { UIMessageChunk } from 'ai';
import type { RunStreamBatch, RunStreamPart } from '../../src/stream/run-stream-store.js';
import { RunStreamUIState } from '../../src/stream/ui-chunks.js';
import { finalMessage } from './fixtures/final-message.js';

const batch = (step: number, cursor: number, parts: RunStreamPart[]): RunStreamBatch => ({
  runId: 'run',
  workflowId: 'wf',
  firstExecutionRunId: 'run',
  execution: 'execution-1',
  step,
  attempt: 1,
  cursor,
  parts,
});
const call = (toolCallId: string): RunStreamPart => ({
  type: 'tool-call',
  toolCallId,
  toolName: 'comment',
  input: { body: toolCallId },
});
const result = (toolCallId: string, output: unknown): RunStreamPart => ({
  type: 'tool-result',
  toolCallId,
  toolName: 'comment',
  output,
});
const end: RunStreamPart = { type: 'step-end', finishReason: 'tool-calls' };

describe('the tool parts of a run stream', () => {
  it('end output-available, output-error and output-denied from the results the next step carries', async () => {
    const ui = new RunStreamUIState((id) => `wf:${id}`);
    const chunks: UIMessageChunk[] = [
      { type: 'start' },
      ...ui.batch(batch(0, 1, [call('a'), call('b'), call('c'), end])),
      ...ui.batch(
        batch(1, 2, [
          result('a', { type: 'json', value: { id: 7 } }),
          result('b', { type: 'error-text', value: 'Tool comment failed after its retries: down' }),
          result('c', { type: 'execution-denied', reason: 'No.' }),
          end,
        ]),
      ),
    ];
    const message = await finalMessage(chunks);
    expect(message?.parts.filter((p) => p.type === 'tool-comment')).toMatchObject([
      { toolCallId: 'a', state: 'output-available', output: { id: 7 } },
      { toolCallId: 'b', state: 'output-error', errorText: 'Tool comment failed after its retries: down' },
      { toolCallId: 'c', state: 'output-denied', approval: { id: 'wf:c', approved: false, reason: 'No.' } },
    ]);
  });

  it('holds an approval request that arrives before its call until the call is shown', async () => {
    const ui = new RunStreamUIState((id) => `wf:${id}`);
    const early = ui.approvalRequested('a');
    expect(early).toEqual([]);
    const chunks: UIMessageChunk[] = [{ type: 'start' }, ...early, ...ui.batch(batch(0, 1, [call('a'), end]))];
    expect(ui.isRequested('a')).toBe(true);
    const message = await finalMessage(chunks);
    expect(message?.parts.find((p) => p.type === 'tool-comment')).toMatchObject({
      toolCallId: 'a',
      state: 'approval-requested',
      approval: { id: 'wf:a' },
    });
  });

  it('replays a call that was approved: approval-requested, approval-responded, then output-available', async () => {
    const ui = new RunStreamUIState((id) => `wf:${id}`);
    ui.approvalRequested('a');
    const chunks: UIMessageChunk[] = [
      { type: 'start' },
      ...ui.batch(batch(0, 1, [call('a'), end])),
      ...ui.batch(batch(1, 2, [result('a', { type: 'json', value: { id: 1 } }), end])),
    ];
    expect(chunks.map((c) => c.type).filter((t) => t.startsWith('tool-'))).toEqual([
      'tool-input-available',
      'tool-approval-request',
      'tool-approval-response',
      'tool-output-available',
    ]);
    const message = await finalMessage(chunks);
    expect(message?.parts.find((p) => p.type === 'tool-comment')).toMatchObject({
      state: 'output-available',
      output: { id: 1 },
      approval: { id: 'wf:a', approved: true },
    });
  });

  it('sends nothing for the result of a call it never showed (the reader would fail on it)', () => {
    const ui = new RunStreamUIState();
    expect(ui.batch(batch(1, 1, [result('unknown', { type: 'json', value: 1 })]))).toEqual([{ type: 'start-step' }]);
  });
});
