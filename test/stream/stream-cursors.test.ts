// Stream cursors come back from pages, so they are checked, not believed: readRunStream refuses a
// `from` that is no cursor at once with InvalidOptionError (NaN and "abc" waited forever without
// a word on SQLite and memory), and runUIMessageStream answers one with a single `error` chunk
// (-1, NaN and "abc" replayed the whole reply without its `start`, so a resuming page showed it
// twice). A valid cursor resumes exactly after itself. The polls of both readers are checked too:
// runUIMessageStream's pollMs of 0 made hundreds of describe calls a second per idle reader.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { UIMessageChunk } from 'ai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineAgent } from '../../src/index.js';
import { InvalidOptionError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import { readRunStream } from '../../src/stream/read-run-stream.js';
import type { RunStreamBatch, RunStreamKey, RunStreamStore } from '../../src/stream/run-stream-store.js';
import { SqliteRunStreamStore } from '../../src/stream/sqlite-run-stream.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { RUN_STREAM_STOPPED, runUIMessageStream } from '../../worker/stream/run-ui-message-stream.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import { streamingModel } from './fixtures/streaming-model.js';

const TEXT = 'A page that resumes from its cursor sees the rest of this answer once, and a forged cursor sees none.';
const FORGED: ReadonlyArray<[string, unknown]> = [
  ['-1', -1],
  ['NaN', NaN],
  ['"abc"', 'abc'],
  ['1.5', 1.5],
];
const CURSOR_RANGE = 'use a whole number from 0 to 9007199254740991 (the `cursor` of the last batch';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
let dir: string;
const opened: RunStreamStore[] = [];

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-cursors-'));
}, 120_000);

afterAll(async () => {
  for (const store of opened) await store.close();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const stores: Array<[string, () => RunStreamStore]> = [
  ['memory', () => new MemoryRunStreamStore()],
  ['SQLite', () => new SqliteRunStreamStore(join(dir, `${randomUUID()}.db`), { pollMs: 20 })],
];
const open = (make: () => RunStreamStore): RunStreamStore => {
  const store = make();
  opened.push(store);
  return store;
};

function thrown(build: () => unknown): unknown {
  try {
    build();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe.each(stores)('readRunStream on the %s store', (_name, make) => {
  it.each(FORGED)('refuses a from of %s at once with InvalidOptionError naming the option', (shown, from) => {
    const store = open(make);
    const error = thrown(() => readRunStream({ store, runId: 'r', workflowId: 'w', from: from as number }));
    expect(InvalidOptionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`readRunStream option from is ${shown}; ${CURSOR_RANGE}`);
  });

  it.each([0, -5, NaN, 5.5])('refuses a checkEveryMs of %s', (checkEveryMs) => {
    const error = thrown(() => readRunStream({ store: open(make), runId: 'r', workflowId: 'w', checkEveryMs }));
    expect(InvalidOptionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      `readRunStream option checkEveryMs is ${checkEveryMs}; use a whole number of milliseconds from 10 to 2147483647.`,
    );
  });

  it('resumes exactly after a valid cursor', async () => {
    const store = open(make);
    const runId = randomUUID();
    const ref = { runId, workflowId: 'w', firstExecutionRunId: runId, step: 0, attempt: 1, execution: 'exec-1' };
    for (const delta of ['a', 'b', 'c']) await store.append(ref, [{ type: 'text-delta', id: 't', delta }]);
    const read = async (from: number): Promise<RunStreamBatch[]> => {
      const batches: RunStreamBatch[] = [];
      for await (const batch of readRunStream({
        store,
        runId: ref.runId,
        workflowId: ref.workflowId,
        from,
        until: () => true,
      }))
        batches.push(batch);
      return batches;
    };
    const all = await read(0);
    expect(all.map((b) => b.parts)).toEqual(['a', 'b', 'c'].map((delta) => [{ type: 'text-delta', id: 't', delta }]));
    expect(await read(all[0]!.cursor)).toEqual(all.slice(1));
    expect(await read(all[2]!.cursor)).toEqual([]);
  });
});

const deltas = (chunks: UIMessageChunk[]): string[] =>
  chunks.flatMap((c) => (c.type === 'text-delta' ? [c.delta] : []));

async function readAll(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
  return chunks;
}

describe('runUIMessageStream', () => {
  it.each([0, NaN, -5, 50, 2.5])(
    'refuses a pollMs of %s when it is called, naming the option and the range',
    (pollMs) => {
      const error = thrown(() =>
        runUIMessageStream({ client: env.client, workflowId: 'any', stream: new MemoryRunStreamStore(), pollMs }),
      );
      expect(InvalidOptionError.isInstance(error)).toBe(true);
      expect((error as Error).message).toBe(
        `runUIMessageStream option pollMs is ${pollMs}; use a whole number of milliseconds from 100 to 2147483647.`,
      );
    },
  );

  it('answers a forged cursor with one error chunk naming it, and a valid one with exactly what followed it', async () => {
    const stream = open(stores[1]![1]);
    const agent = defineAgent({
      name: `cursors-${randomUUID()}`,
      model: streamingModel([{ text: TEXT }], { delayMs: 5 }),
    });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [agent],
      store: new MemoryEffectStore(),
      stream,
      workerOptions: { workflowBundle: bundle },
    });
    const { workflowId } = await worker.runUntil(async () => {
      const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'Talk.', taskQueue });
      await handle.result();
      return handle;
    });
    const ui = (from?: unknown) =>
      readAll(
        runUIMessageStream({
          client: env.client,
          workflowId,
          stream,
          progressParts: false,
          ...(from === undefined ? {} : { from: from as number }),
        }),
      );
    const full = await ui();
    expect(full[0]?.type).toBe('start');
    for (const [shown, from] of FORGED) {
      expect({ from: shown, chunks: await ui(from) }).toEqual({
        from: shown,
        chunks: [
          {
            type: 'error',
            errorText: expect.stringContaining(
              `${RUN_STREAM_STOPPED}runUIMessageStream option from is ${shown}; ${CURSOR_RANGE}`,
            ),
          },
        ],
      });
    }
    // Every cursor part of the full replay is a place to resume: what follows it, exactly.
    const markers = full.flatMap((c, i) =>
      c.type === 'data-chamvi-cursor' ? [{ i, cursor: (c.data as { cursor: number }).cursor }] : [],
    );
    expect(markers.length).toBeGreaterThan(2);
    for (const { i, cursor } of [markers[0]!, markers[Math.floor(markers.length / 2)]!, markers.at(-1)!]) {
      expect({ cursor, chunks: await ui(cursor) }).toEqual({ cursor, chunks: full.slice(i + 1) });
    }
    // The stream's first two batches pruned: a page's worth read after the gap must not swallow
    // what follows the cursor.
    const pruned: RunStreamStore = Object.assign(Object.create(stream) as RunStreamStore, {
      read: (key: RunStreamKey, after: number, limit?: number) => stream.read(key, Math.max(after, 2), limit),
    });
    const { i, cursor } = markers[3]!;
    const resumed = await readAll(
      runUIMessageStream({ client: env.client, workflowId, stream: pruned, progressParts: false, from: cursor }),
    );
    expect(deltas(resumed)).toEqual(deltas(full.slice(i + 1)));
    expect(deltas(resumed).length).toBeGreaterThan(0);
  }, 60_000);
});
