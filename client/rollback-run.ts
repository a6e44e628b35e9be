import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { appliedEffectsQuery } from '../common/agent-progress.js';
import type { StoreActivityOptions, ToolActivityOptions } from '../common/activity-options.js';
import { RunNotFinishedError } from '../src/errors/errors.js';
import type { RollbackOutput, RollbackWorkflowInput } from '../workflows/rollback-workflow.js';

/** What {@link rollbackRun} takes besides the client and the run's workflow id. @beta */
export interface RollbackRunOptions {
  /** The run's execution; default: the latest execution of the workflow id. */
  readonly runId?: string;
  /** Where the rollback workflow runs; default: the run's own task queue. */
  readonly taskQueue?: string;
  /** Activity options of the compensations and of the effect-store activity. */
  readonly activityOptions?: {
    readonly compensate?: ToolActivityOptions;
    readonly store?: StoreActivityOptions;
  };
}

/** The workflow id of the rollback of `workflowId`: one per run's workflow id, so a rollback is never started twice side by side. @beta */
export function rollbackWorkflowId(workflowId: string): string {
  return `${workflowId}:rollback`;
}

/**
 * Rolls a finished agent run back: undoes each applied effect (`executed` or `reconciled`) whose
 * tool has `compensate`, in reverse order of application, at most once each (a compensation is an
 * effect under the key `<key>:compensate`). Resolves with the run's effect report, each
 * compensated call carrying its `compensation`.
 *
 * Reads the run's applied calls by query (a worker of its task queue answers it) and starts the
 * `rollbackWorkflow` under {@link rollbackWorkflowId}: a second call while it runs joins it, a call
 * after it completed returns its result without running anything, and a call after it failed (a
 * compensation kept failing: `RollbackIncompleteError`) starts it again, and only the undos not
 * recorded yet run. Each compensation's activity checks the call against the store's record of it,
 * so nothing is undone that this store did not record as applied by that tool and run.
 *
 * @throws RunNotFinishedError while the run is still running.
 * @throws WorkflowFailedError (cause `RollbackIncompleteError`) when a compensation kept failing.
 * @beta
 */
export async function rollbackRun(
  client: Client,
  workflowId: string,
  options: RollbackRunOptions = {},
): Promise<RollbackOutput> {
  const run = client.workflow.getHandle(workflowId, options.runId);
  const description = await run.describe();
  if (description.status.name === 'RUNNING') throw new RunNotFinishedError(workflowId);
  // One query: a closed run answers each by replaying its history on a worker.
  const { run: ref, applied, effects } = await run.query(appliedEffectsQuery);
  const input: RollbackWorkflowInput = {
    run: ref,
    applied,
    effects,
    ...(options.activityOptions !== undefined ? { activityOptions: options.activityOptions } : {}),
  };
  const id = rollbackWorkflowId(workflowId);
  try {
    const handle = await client.workflow.start<(input: RollbackWorkflowInput) => Promise<RollbackOutput>>(
      'rollbackWorkflow',
      {
        taskQueue: options.taskQueue ?? description.taskQueue,
        workflowId: id,
        args: [input],
        staticSummary: `rollback of ${workflowId}`.slice(0, 200),
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      },
    );
    return await handle.result();
  } catch (error) {
    // Completed before: its result is the answer, and nothing runs again.
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    return client.workflow.getHandle<(input: RollbackWorkflowInput) => Promise<RollbackOutput>>(id).result();
  }
}
