import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { startAgentRun } from '../worker/client.js';
import { RUN_HELP } from './help.js';
import { parseFlags, required, TEMPORAL_OPTIONS } from './flags.js';
import { temporalSettings } from './settings.js';
import { effectReportTable } from './table.js';
import { connectClient } from './temporal-connection.js';
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
    },
    1,
  );
  if (values.help) {
    process.stdout.write(`${RUN_HELP}\n`);
    return 0;
  }
  const agent = required('run', 'the agent name', positionals[0], 'chamvi run <agent> --prompt <text>');
  const prompt = required('run', '--prompt', values.prompt);
  const { address, namespace, taskQueue } = temporalSettings(values);
  const client = await connectClient(address, namespace);
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
    let result;
    try {
      result = await handle.result();
    } catch (error) {
      if (!(error instanceof WorkflowFailedError)) throw error;
      const cause: unknown = error.cause?.cause ?? error.cause;
      throw new Error(`run ${ids.workflowId} failed: ${cause instanceof Error ? cause.message : error.message}`, {
        cause: error,
      });
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ ...ids, text: result.text, effects: result.effects }, null, 2)}\n`);
      return 0;
    }
    process.stdout.write(`\n${result.text}\n\neffects of run ${result.runId}:\n${effectReportTable(result.effects)}\n`);
    return 0;
  } finally {
    await client.connection.close();
  }
}
