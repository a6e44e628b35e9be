import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { agentWorkflow, AgentWorkflowInput } from '../workflows/agent-workflow.js';
import type { AgentRunOutput } from '../workflows/agent-loop.js';

/** What {@link startAgentRun} takes: the workflow input plus where and under which id to start it. */
export type StartAgentRunOptions = AgentWorkflowInput & {
  readonly taskQueue: string;
  /** Default: `agent-<agent name>-<random>`. Starting a new workflow with an id again starts a new run. */
  readonly workflowId?: string;
  /** Workflow-level retry policy; a retried workflow keeps its run id, so effects are not applied again. */
  readonly workflowRetry?: { readonly maximumAttempts?: number; readonly initialInterval?: string | number };
};

/**
 * Starts the generic agent workflow for a registered agent, without writing workflow code.
 * Returns the workflow handle; `await handle.result()` gives the text, steps and effect report.
 */
export async function startAgentRun(
  client: Client,
  options: StartAgentRunOptions,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof agentWorkflow>> {
  const { taskQueue, workflowId, workflowRetry, ...input } = options;
  return client.workflow.start<typeof agentWorkflow>('agentWorkflow', {
    taskQueue,
    workflowId: workflowId ?? `agent-${input.agent}-${crypto.randomUUID()}`,
    args: [input],
    ...(workflowRetry !== undefined ? { retry: workflowRetry } : {}),
  });
}

/** Starts an agent run and waits for its result. */
export async function runAgentWorkflow(client: Client, options: StartAgentRunOptions): Promise<AgentRunOutput> {
  const handle = await startAgentRun(client, options);
  return handle.result();
}
