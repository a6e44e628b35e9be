import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import type { RunEffectReport } from '../common/index.js';
import { createRunStreamStore } from '../src/stream/create-run-stream-store.js';
import { startAgentRun } from '../client/start-agent-run.js';
import { RUN_STREAM_STOPPED, runUIMessageStream } from '../worker/stream/run-ui-message-stream.js';
import { announcePendingApprovals } from './approval-announcer.js';
import { printRunStream } from './stream-printer.js';
import { streamSpecOf } from './stream-flag.js';
import { RUN_HELP } from './help.js';
import { parseFlags, required, TEMPORAL_OPTIONS } from './flags.js';
import { hasPollers, pollerWaitMs } from './pollers.js';
import { effectReportTable, shortKey } from './table.js';
import { clientFromFlags } from './temporal-connection.js';
import { UsageError } from './usage-error.js';

export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    'run',
    args,
    {
      ...TEMPORAL_OPTIONS,
      prompt: { type: 'string' },
      'workflow-id': { type: 'string' },
      wait: { type: 'boolean' },
      json: { type: 'boolean' },
      stream: { type: 'string' },
    },
    1,
  );
  if (values.help) {
    process.stdout.write(`${RUN_HELP}\n`);
    return 0;
  }
  const agent = required('run', 'the agent name', positionals[0], 'chamvi run <agent> --prompt <text>');
  const prompt = required('run', '--prompt', values.prompt);
  const { client, settings } = await clientFromFlags('run', values);
  const { address, namespace, taskQueue } = settings;
  try {
    let handle;
    try {
      handle = await startAgentRun(client, {
        agent,
        prompt,
        taskQueue,
        ...(values['workflow-id'] ? { workflowId: values['workflow-id'] } : {}),
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        throw new UsageError(
          `run: workflow id "${values['workflow-id'] ?? ''}" is already running; pick another --workflow-id`,
        );
      }
      throw error;
    }
    const ids = {
      workflowId: handle.workflowId,
      runId: (handle as WorkflowHandleWithFirstExecutionRunId).firstExecutionRunId,
    };
    if (!values.json) process.stdout.write(`workflow id: ${ids.workflowId}\nrun id:      ${ids.runId}\n`);
    if (!values.wait) return 0;
    // Without a worker the result would never come: say so now instead of waiting in silence.
    if (!(await hasPollers(client, taskQueue, pollerWaitMs()))) {
      process.stderr.write(
        `chamvi: run: no worker is polling task queue "${taskQueue}" at ${address} (namespace ${namespace}); ` +
          `the run ${ids.workflowId} is started and waits for one: start a worker for agent "${agent}" ` +
          `(chamvi worker --agents <module> --task-queue ${taskQueue}), or check --task-queue and --address\n`,
      );
      return 1;
    }
    // With a run stream, the text is printed as the steps stream it (not with --json: one document).
    const streamSpec = values.json ? undefined : streamSpecOf('run', values.stream);
    const stream = streamSpec === undefined ? undefined : createRunStreamStore(streamSpec);
    const printing =
      stream === undefined
        ? undefined
        : printRunStream(
            runUIMessageStream({ client, workflowId: ids.workflowId, stream, progressParts: false }),
            (text) => process.stdout.write(text),
          ).catch((error: unknown) => {
            // The stream is a view: if it fails, the result below is still printed whole.
            process.stderr.write(
              `chamvi: run: the stream stopped (${error instanceof Error ? error.message : String(error)})\n`,
            );
            return { printed: false, stopped: undefined };
          });
    // A call waiting for a person would otherwise look like a hang: say how to decide it.
    const waiting = new AbortController();
    const announcing = announcePendingApprovals(
      client,
      ids.workflowId,
      (line) => (values.json ? process.stderr : process.stdout).write(line),
      waiting.signal,
    );
    let streamed = false;
    let stopped: string | undefined;
    let result;
    try {
      result = await handle.result();
    } catch (error) {
      if (!(error instanceof WorkflowFailedError)) throw error;
      const cause: unknown = error.cause?.cause ?? error.cause;
      throw new Error(`run ${ids.workflowId} failed: ${cause instanceof Error ? cause.message : error.message}`, {
        cause: error,
      });
    } finally {
      waiting.abort();
      await announcing;
      // The stream ends once the run closed: what it still holds is printed before the summary.
      const printed = await printing;
      streamed = printed?.printed ?? false;
      stopped = printed?.stopped;
      await stream?.close();
    }
    if (stopped !== undefined) {
      // The run completed, so the stream's error chunk says it could not follow: the text is printed whole below.
      process.stderr.write(`chamvi: run: the stream stopped (${stopped.replace(RUN_STREAM_STOPPED, '')})\n`);
      streamed = false;
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ ...ids, text: result.text, effects: result.effects }, null, 2)}\n`);
    } else {
      // Streamed text is on the screen already; otherwise the final text is printed here.
      process.stdout.write(
        `${streamed ? '' : `\n${result.text}\n`}\neffects of run ${result.runId}:\n${effectReportTable(result.effects)}\n`,
      );
    }
    const failed = result.effects.filter((e) => e.outcome === 'failed');
    if (failed.length === 0) return 0;
    process.stderr.write(`chamvi: run: ${failedSummary(failed)}\n`);
    return 1;
  } finally {
    await client.connection.close();
  }
}

/** One line naming each failed call: tool, key, attempts, last error. */
function failedSummary(failed: readonly RunEffectReport[]): string {
  const calls = failed.map(
    (e) =>
      `${e.toolName} (key ${shortKey(e.key, 48)}) after ${e.attempts} attempt${e.attempts === 1 ? '' : 's'}: ${e.error?.message ?? 'unknown error'}`,
  );
  return `${failed.length} effect call${failed.length === 1 ? '' : 's'} failed: ${calls.join('; ')}`;
}
