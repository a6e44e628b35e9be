// A workflow of your own around the agent loop: it waits between model steps (a timer, durable
// across worker restarts) and returns the run's output with how long it waited. The file is the
// worker's workflowsPath, so it re-exports agentWorkflow too, for startAgentRun.
import { sleep } from '@temporalio/workflow';
import { runAgentLoop, type AgentRunOutput } from '@chamvi/temporal/workflows';

export { agentWorkflow } from '@chamvi/temporal/workflows';

export async function patientAgentWorkflow(input: {
  agent: string;
  prompt: string;
  waitBetweenSteps: string;
}): Promise<AgentRunOutput & { waitedMs: number }> {
  const started = Date.now();
  const output = await runAgentLoop({
    agent: input.agent,
    prompt: input.prompt,
    beforeStep: () => sleep(input.waitBetweenSteps),
  });
  return { ...output, waitedMs: Date.now() - started };
}
