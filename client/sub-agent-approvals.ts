import type { Client } from '@temporalio/client';
import { pendingApprovalsQuery } from '../common/approval-handlers.js';
import { agentProgressQuery, type AgentProgress } from '../common/agent-progress.js';
import type { ChildRunReport } from '../common/child-run-report.js';
import type { PendingApproval } from '../common/index.js';

/** A call waiting for approval in a sub-agent run of the tree, with the top run's call it waits under. */
export interface SubAgentPending {
  /** The waiting call, with the `workflowId` of the sub-agent run it waits in. */
  readonly pending: PendingApproval & { readonly workflowId: string };
  /** The top run's own sub-agent run (a child) whose tree holds the call: its `toolCallId` is the top run's call. */
  readonly via: ChildRunReport;
}

/**
 * The pending calls of the running sub-agent runs of `workflowId`, and of theirs, level by level
 * through each run's progress query (`children`). `progress`: the top run's progress when the
 * caller has it (not asked again). A top run that answers no progress query (a workflow of the
 * user's own without the loop's) has no sub-agents to list; a sub-agent run that does not answer
 * fails the listing (a partial list would pass for "nothing waiting").
 */
export async function subAgentApprovals(
  client: Client,
  workflowId: string,
  progress?: AgentProgress,
): Promise<SubAgentPending[]> {
  const known =
    progress ??
    (await client.workflow
      .getHandle(workflowId)
      .query(agentProgressQuery)
      .catch(() => undefined));
  return below(client, known);
}

async function below(client: Client, progress: AgentProgress | undefined): Promise<SubAgentPending[]> {
  const running = (progress?.children ?? []).filter((child) => child.status === 'running');
  const lists = await Promise.all(
    running.map(async (via) => {
      const handle = client.workflow.getHandle(via.workflowId);
      const [own, next] = await Promise.all([handle.query(pendingApprovalsQuery), handle.query(agentProgressQuery)]);
      const nested = await below(client, next);
      return [
        ...own.map((p) => ({ pending: { ...p, workflowId: via.workflowId }, via })),
        ...nested.map(({ pending }) => ({ pending, via })),
      ];
    }),
  );
  return lists.flat();
}
