// A UI stream of a run that cannot be followed (a workflow id that does not exist), on Temporal's
// time-skipping server: it ends with an `error` chunk naming why instead of erroring, so the page
// gets an error event (an errored stream sent a 200 with an empty body, which a page reads again
// and again), and a plain Node route piping it with pipeUIMessageStreamToResponse without
// awaiting leaves no unhandled rejection behind (one ends a Node server by default).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { pipeUIMessageStreamToResponse, type UIMessageChunk } from 'ai';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { RUN_STREAM_STOPPED, runUIMessageStream } from '../../worker/stream/run-ui-message-stream.js';

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

describe('a UI stream of a run that cannot be followed', () => {
  it('ends with an error chunk naming why, and does not error', async () => {
    const stream = runUIMessageStream({
      client: env.client,
      workflowId: `no-such-run-${randomUUID()}`,
      stream: new MemoryRunStreamStore(),
    });
    const chunks: UIMessageChunk[] = [];
    const reader = stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
    expect(chunks).toEqual([
      { type: 'error', errorText: expect.stringMatching(/^The run stream stopped: .*not found/i) },
    ]);
    expect((chunks[0] as { errorText: string }).errorText.startsWith(RUN_STREAM_STOPPED)).toBe(true);
  });

  it('piped to a Node response, answers with the error event and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const server = createServer((_req, res) => {
      const stream = runUIMessageStream({
        client: env.client,
        workflowId: `no-such-run-${randomUUID()}`,
        stream: new MemoryRunStreamStore(),
      });
      // Not awaited, as a plain route does: an errored stream would reject this promise, unhandled.
      void pipeUIMessageStreamToResponse({ response: res, stream });
    });
    try {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const { port } = server.address() as AddressInfo;
      const body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      expect(body).toContain('"type":"error"');
      expect(body).toContain('The run stream stopped');
      // A rejection left unhandled is reported after the turn it happened in.
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await new Promise((r) => server.close(r));
    }
  });
});
