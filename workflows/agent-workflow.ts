import { continueAsNew, workflowInfo } from '@temporalio/workflow';
import { runAgentLoop, type AgentCheckpoint, type AgentLoopOptions, type AgentRunOutput } from './agent-loop.js';

/** Input of {@link agentWorkflow}: the loop's options, plus when to continue as new. @public */
export type AgentWorkflowInput = Omit<AgentLoopOptions, 'beforeStep'> & {
  /**
   * Continue as new after this many steps in one workflow execution (the run keeps its id, its
   * messages and its effect report). Default: when Temporal suggests it (history size).
   */
  readonly continueAsNewAfterSteps?: number;
};

/**
 * The generic agent workflow: runs the registered agent named in the input until the model stops,
 * and returns the final text, the steps and the effect report. Continues as new when the history
 * grows large (or every `continueAsNewAfterSteps` steps), keeping the run's identity.
 * @public
 */
export async function agentWorkflow(input: AgentWorkflowInput): Promise<AgentRunOutput> {
  const stepsAtStart = input.checkpoint?.step ?? 0;
  return runAgentLoop({
    ...input,
    // A promise only when it continues as new: the loop awaits nothing before the other steps.
    beforeStep: (checkpoint: AgentCheckpoint) => {
      const every = input.continueAsNewAfterSteps;
      const due = every !== undefined ? checkpoint.step - stepsAtStart >= every : workflowInfo().continueAsNewSuggested;
      return due ? continueAsNew<typeof agentWorkflow>({ ...input, checkpoint }) : undefined;
    },
  });
}
