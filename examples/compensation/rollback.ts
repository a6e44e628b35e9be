// Compensation from a client: a run that undoes its effects when it fails or is cancelled, and the
// rollback of a finished run on demand. Shown in docs/guides/compensation.md, in excerpts that
// test/docs/code-blocks.test.ts keeps equal to this file.
import { ApplicationFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { rollbackRun, startAgentRun, type RunEffectReport } from '@chamvi/temporal/client';

/** Starts a triage run that compensates its applied effects if it fails or is cancelled. */
export async function startCompensatedRun(client: Client, issue: number) {
  return startAgentRun(client, {
    agent: 'triage',
    prompt: `Triage issue ${issue}`,
    taskQueue: 'agents',
    compensateOn: ['failure', 'cancel'],
    // Each undo is retried like a tool call; here at most 20 attempts.
    activityOptions: { compensate: { retry: { maximumAttempts: 20 } } },
  });
}

/** Undoes a finished run's effects; when some undo kept failing, names it and rethrows. */
export async function undoRun(client: Client, workflowId: string): Promise<RunEffectReport[]> {
  try {
    return (await rollbackRun(client, workflowId)).effects;
  } catch (error) {
    const failure = error instanceof WorkflowFailedError ? error.cause : undefined;
    if (failure instanceof ApplicationFailure && failure.type === 'RollbackIncompleteError') {
      const [{ effects }] = failure.details as [{ effects: RunEffectReport[] }];
      for (const effect of effects.filter((e) => e.compensation?.status === 'compensation-failed'))
        console.warn(`not undone: ${effect.toolName} ${effect.key}: ${effect.compensation?.error?.message ?? ''}`);
    }
    throw error;
  }
}
