import { TerminatedFailure, type Client } from '@temporalio/client';

/** Resets followed at most, one hop each: more in a row is a server answering in circles. */
const MAX_RESETS_FOLLOWED = 20;

/**
 * The result of the workflow chain from run `run` on (undefined: the workflow id's current run), as
 * the run's handle gives it, and past resets too: `result()` follows continue-as-new and workflow
 * retries, but a run that a reset ended is terminated (with the reset's reason), and the chain
 * goes on in the run Temporal names as its `resetRunId`.
 */
export async function chainResult(
  client: Client,
  workflowId: string,
  run: string | undefined,
  signal: AbortSignal,
): Promise<unknown> {
  for (let hops = 0; ; hops++) {
    const handle = client.workflow.getHandle(workflowId, run);
    try {
      return await client.withAbortSignal(signal, () => handle.result());
    } catch (error) {
      const terminated = (error as { cause?: unknown }).cause instanceof TerminatedFailure;
      const next =
        terminated && run !== undefined && hops < MAX_RESETS_FOLLOWED
          ? (await client.withAbortSignal(signal, () => handle.describe())).raw.workflowExtendedInfo?.resetRunId
          : undefined;
      if (typeof next !== 'string' || next.length === 0 || next === run) throw error;
      run = next;
    }
  }
}
