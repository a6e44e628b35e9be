// The run stream writer's bound at the end of a model step: a store that never answers, or fails
// every write, holds the step at most STREAM_CLOSE_BUDGET_MS, and the writer warns once; a store
// that answers in time gets every part, in order, without a warning.
import { describe, expect, it } from '@jest/globals';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import type { RunStreamStore } from '../../src/stream/run-stream-store.js';
import { RunStreamWriter, STREAM_CLOSE_BUDGET_MS } from '../../src/stream/run-stream-writer.js';

const ref = { runId: 'r', workflowId: 'w', firstExecutionRunId: 'r', step: 0, attempt: 1, execution: 'exec-1' };
// A loaded 2-core machine fires the budget's timer late (up to ~500 ms seen in CI); a budget twice
// as long as STREAM_CLOSE_BUDGET_MS still fails the bound.
const SLACK_MS = 450;

/** A store whose appends are answered by `answer` (counted). */
function storeWith(
  answer: (store: MemoryRunStreamStore, ...args: Parameters<RunStreamStore['append']>) => Promise<number>,
) {
  const inner = new MemoryRunStreamStore();
  const calls = { appends: 0 };
  const store: RunStreamStore = Object.assign(Object.create(inner) as RunStreamStore, {
    append: (...args: Parameters<RunStreamStore['append']>) => {
      calls.appends++;
      return answer(inner, ...args);
    },
  });
  return { inner, store, calls };
}

function writerOf(store: RunStreamStore) {
  const warnings: Array<{ message: string; parts: number }> = [];
  const writer = new RunStreamWriter(store, ref, (message, meta) => warnings.push({ message, parts: meta.parts }));
  return { writer, warnings };
}

async function timed(promise: Promise<void>): Promise<number> {
  const started = performance.now();
  await promise;
  return performance.now() - started;
}

describe('the run stream writer at the end of a step', () => {
  it('returns within STREAM_CLOSE_BUDGET_MS and warns once when the store never answers an append', async () => {
    const { store, calls } = storeWith(() => new Promise<number>(() => undefined));
    const { writer, warnings } = writerOf(store);
    writer.push({ type: 'text-delta', id: 't', delta: 'Hello' });
    writer.push({ type: 'text-delta', id: 't', delta: ' world' });
    writer.push({ type: 'step-end', finishReason: 'stop' });
    const ms = await timed(writer.close());
    expect(ms).toBeGreaterThanOrEqual(STREAM_CLOSE_BUDGET_MS - 5);
    expect(ms).toBeLessThan(STREAM_CLOSE_BUDGET_MS + SLACK_MS);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(
      new RegExp(
        `run r, step 0, attempt 1: the store did not take the step's last 3 parts within ${STREAM_CLOSE_BUDGET_MS} ms`,
      ),
    );
    expect(warnings[0]?.parts).toBe(3);
    // Given up: later parts are not written, closing again does not wait or warn again.
    writer.push({ type: 'text-delta', id: 't', delta: 'late' });
    expect(await timed(writer.close())).toBeLessThan(SLACK_MS);
    expect(warnings).toHaveLength(1);
    expect(calls.appends).toBe(1);
  }, 5_000);

  it('gives up a store that fails every write within the budget, after three more tries, with one warning', async () => {
    const { store, calls } = storeWith(() => Promise.reject(new Error('connection refused')));
    const { writer, warnings } = writerOf(store);
    writer.push({ type: 'text-delta', id: 't', delta: 'a' });
    const ms = await timed(writer.close());
    expect(ms).toBeLessThan(STREAM_CLOSE_BUDGET_MS);
    expect(calls.appends).toBe(4);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain('a write failed (connection refused)');
  });

  it('writes nothing more when the write in flight answers after the writer gave up', async () => {
    let answer: (() => void) | undefined;
    const { inner, store, calls } = storeWith(async (inner, ...args) => {
      await new Promise<void>((resolve) => (answer = resolve));
      return inner.append(...args);
    });
    const { writer, warnings } = writerOf(store);
    writer.push({ type: 'text-delta', id: 't', delta: 'first' });
    writer.push({ type: 'text-delta', id: 't', delta: 'queued' });
    await writer.close();
    answer?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls.appends).toBe(1);
    expect((await inner.read(ref, 0)).flatMap((b) => b.parts)).toEqual([
      { type: 'text-delta', id: 't', delta: 'first' },
    ]);
    expect(warnings).toHaveLength(1);
  }, 5_000);

  it('writes every part, in order and without a warning, when the store answers within the budget', async () => {
    const { inner, store } = storeWith(async (inner, ...args) => {
      await new Promise((resolve) => setTimeout(resolve, 60));
      return inner.append(...args);
    });
    const { writer, warnings } = writerOf(store);
    writer.push({ type: 'text-delta', id: 't', delta: 'a' });
    writer.push({ type: 'text-delta', id: 't', delta: 'b' });
    writer.push({ type: 'step-end', finishReason: 'stop' });
    await writer.close();
    expect((await inner.read(ref, 0)).flatMap((b) => b.parts)).toEqual([
      { type: 'text-delta', id: 't', delta: 'a' },
      { type: 'text-delta', id: 't', delta: 'b' },
      { type: 'step-end', finishReason: 'stop' },
    ]);
    expect(warnings).toEqual([]);
  });
});
