import type { Client } from '@temporalio/client';
import {
  agentProgressQuery,
  listPendingApprovals,
  type AgentRunOutput,
  type PendingApproval,
  type RunEffectReport,
} from '../../client/index.js';

/** What the page shows of a run besides its text: where it is, its effect calls, what waits for a decision. */
export interface RunState {
  readonly workflowId: string;
  /** The user's message that started the run (from the run's memo). */
  readonly message: string;
  readonly status: 'running' | 'completed' | 'failed';
  /** The step running or last run (0-based). */
  readonly step: number;
  /** Every effect call so far with its outcome: executed, reconciled, recorded, failed, denied. */
  readonly effects: readonly RunEffectReport[];
  /** Calls waiting for Approve / Deny. */
  readonly pending: readonly PendingApproval[];
  /** The final text, once completed. */
  readonly text?: string;
  readonly error?: string;
  /**
   * True when no worker answered the run's queries in time (between a worker's death and the next
   * one taking over): effects and pending are the last ones seen.
   */
  readonly stale?: boolean;
}

const QUERY_TIMEOUT_MS = 2_000;

/**
 * Reads a run's state from Temporal: a closed run from its result (the effect report is durable
 * there), a running one from its queries (`chamvi.progress`, `chamvi.pendingApprovals`), answered
 * by a live worker. A query nobody answers within 2 s gives the last state seen, marked `stale`.
 */
export async function readRunState(
  client: Client,
  workflowId: string,
  lastSeen: Map<string, RunState>,
): Promise<RunState> {
  const handle = client.workflow.getHandle(workflowId);
  const description = await handle.describe();
  const { status } = description;
  const memo = description.memo?.['message'];
  const message = typeof memo === 'string' ? memo : '';
  let state: RunState;
  if (status.name === 'COMPLETED') {
    const output = (await handle.result()) as AgentRunOutput;
    const step = Math.max(0, output.steps.length - 1);
    state = { workflowId, message, status: 'completed', step, effects: output.effects, pending: [], text: output.text };
  } else if (status.name === 'RUNNING') {
    try {
      // A gRPC deadline, not a race: the query ends with the deadline (DEADLINE_EXCEEDED is not
      // retried), so no call outlives it in the client's retry loop.
      const [progress, pending] = await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () =>
        Promise.all([handle.query(agentProgressQuery), listPendingApprovals(client, workflowId)]),
      );
      state = { workflowId, message, status: 'running', step: progress.step, effects: progress.effects, pending };
    } catch {
      const last = lastSeen.get(workflowId);
      const step = last?.step ?? 0;
      return {
        workflowId,
        message,
        status: 'running',
        step,
        effects: last?.effects ?? [],
        pending: last?.pending ?? [],
        stale: true,
      };
    }
  } else {
    const error = await handle.result().then(
      () => `the run ended ${status.name}`,
      (e: unknown) => (e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)),
    );
    state = {
      workflowId,
      message,
      status: 'failed',
      step: lastSeen.get(workflowId)?.step ?? 0,
      effects: [],
      pending: [],
      error,
    };
  }
  lastSeen.set(workflowId, state);
  return state;
}
