import type { Client } from '@temporalio/client';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import type { ChildRunReport } from '../../common/child-run-report.js';
import type { RunStreamStore } from '../../src/stream/run-stream-store.js';
import { RunStreamUIState } from '../../src/stream/ui-chunks.js';

/**
 * Follows a sub-agent run's own stream in the run stream store, as the AI SDK's subagent pattern
 * streams one: the chunks of its steps are read into a `UIMessage` with `readUIMessageStream`,
 * and `show` gets the whole message so far (each one replaces the last), at most once per event
 * loop turn, so a batch of text deltas is one message. Resolves when `stop` aborts; rejects when
 * the sub-agent run cannot be described or its stream read (the caller may follow it again).
 *
 * The stream key is the sub-agent run's own: its run id (`ctx.run.runId`), its workflow id and its
 * first execution's run id, which a describe call gives.
 */
export async function followSubAgentText(
  client: Client,
  stream: RunStreamStore,
  child: ChildRunReport,
  stop: AbortSignal,
  show: (message: UIMessage) => void,
): Promise<void> {
  const description = await client.withAbortSignal(stop, () => client.workflow.getHandle(child.workflowId).describe());
  const first = description.raw.workflowExecutionInfo?.firstRunId;
  const key = {
    runId: child.runId,
    workflowId: child.workflowId,
    firstExecutionRunId: typeof first === 'string' && first.length > 0 ? first : description.runId,
  };
  let push!: ReadableStreamDefaultController<UIMessageChunk>;
  const chunks = new ReadableStream<UIMessageChunk>({
    start(controller) {
      push = controller;
    },
  });
  let latest: UIMessage | undefined;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (latest !== undefined && !stop.aborted) show(latest);
  };
  const messages = (async () => {
    for await (const message of readUIMessageStream({ stream: chunks })) {
      latest = message;
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    }
  })();
  push.enqueue({ type: 'start', messageId: `chamvi-${child.runId}` });
  const ui = new RunStreamUIState();
  let cursor = 0;
  try {
    while (!stop.aborted) {
      const batches = await stream.read(key, cursor);
      for (const batch of batches) {
        for (const chunk of ui.batch(batch)) push.enqueue(chunk);
        cursor = batch.cursor;
      }
      if (batches.length === 0) await stream.waitForAppend(key, cursor, stop);
    }
  } finally {
    push.close();
    await messages;
  }
}
