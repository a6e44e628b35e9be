import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import type { ApprovalRecord } from '../../common/index.js';
import type { AgentRunOutput } from '../../workflows/agent-loop.js';
import type { RunProgressParts } from './run-progress-parts.js';

/**
 * The run id of `workflowId` (`given`, else its first execution's run id, which the agent workflow
 * uses: Temporal keeps it across retries, continue-as-new and reset; else, from a server that does
 * not say, the progress query's, else the current execution's), the first run id (`chain`), and
 * the description of the workflow id's current execution.
 */
export async function resolveRunId(
  client: Client,
  workflowId: string,
  progress: RunProgressParts,
  given: string | undefined,
): Promise<{ runId: string; chain: string | undefined; status: string; description: WorkflowExecutionDescription }> {
  const description = await client.workflow.getHandle(workflowId).describe();
  const first = description.raw.workflowExecutionInfo?.firstRunId;
  const chain = typeof first === 'string' && first.length > 0 ? first : undefined;
  const runId = given ?? chain ?? (await progress.progress())?.runId ?? description.runId;
  return { runId, chain, status: description.status.name, description };
}

/**
 * The approval decisions of the run so far: its output's once it completed, else its progress
 * query's (none when no worker answers).
 */
export async function decidedApprovals(
  result: () => Promise<unknown>,
  status: string,
  progress: RunProgressParts,
): Promise<readonly ApprovalRecord[]> {
  if (status === 'COMPLETED') return ((await result()) as AgentRunOutput).approvals ?? [];
  if (status !== 'RUNNING' && status !== 'PAUSED') return [];
  return (await progress.progress())?.approvals ?? [];
}
