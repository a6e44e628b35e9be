import type { Client } from '@temporalio/client';

/** How long `run --wait` gives a worker to show up on the task queue before it says none polls it. */
export const POLLER_WAIT_MS = 5_000;
/** Overrides {@link POLLER_WAIT_MS}, in ms. */
export const POLLER_WAIT_ENV = 'CHAMVI_POLLER_WAIT_MS';

/**
 * Whether a worker polls `taskQueue` for workflow tasks (describe task queue: its pollers, which
 * the server remembers for a few minutes after their last poll), asked again every 250 ms until
 * `waitMs` have passed.
 */
export async function hasPollers(client: Client, taskQueue: string, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { pollers } = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      // TASK_QUEUE_KIND_NORMAL and TASK_QUEUE_TYPE_WORKFLOW (1 each in Temporal's API), as numbers:
      // the enums live in @temporalio/proto, which users do not install themselves.
      taskQueue: { name: taskQueue, kind: 1 },
      taskQueueType: 1,
    });
    if ((pollers ?? []).length > 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** {@link POLLER_WAIT_MS}, or the env var's value. */
export function pollerWaitMs(): number {
  const value = Number(process.env[POLLER_WAIT_ENV]);
  return Number.isFinite(value) && value >= 0 && process.env[POLLER_WAIT_ENV] !== '' ? value : POLLER_WAIT_MS;
}
