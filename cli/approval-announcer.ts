import type { Client } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { listPendingApprovals } from '../client/approvals-client.js';

/** How often `chamvi run --wait` asks the run which calls wait for approval, in ms. */
export const APPROVAL_POLL_MS = 1000;

/**
 * Until `signal` aborts, asks the run every `pollMs` which calls wait for a decision and writes,
 * once per call, the command that decides it: `waiting for approval: chamvi approve <workflow>
 * <call>`. A query that fails (no worker answering yet) is asked again at the next tick: this is a
 * hint for the person waiting, the run's result does not depend on it.
 */
export async function announcePendingApprovals(
  client: Client,
  workflowId: string,
  write: (line: string) => void,
  signal: AbortSignal,
  pollMs = APPROVAL_POLL_MS,
): Promise<void> {
  const announced = new Set<string>();
  while (!signal.aborted) {
    const pending = await client
      .withAbortSignal(signal, () => listPendingApprovals(client, workflowId))
      .catch(() => []);
    for (const call of pending) {
      if (signal.aborted || announced.has(call.toolCallId)) continue;
      announced.add(call.toolCallId);
      write(`waiting for approval: chamvi approve ${workflowId} ${call.toolCallId}\n`);
    }
    await sleep(pollMs, undefined, { signal }).catch(() => undefined);
  }
}
