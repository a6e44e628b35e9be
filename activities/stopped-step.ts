import type { Agent } from '../src/agent/define-agent.js';
import type { ModelStepResult } from '../common/index.js';

/**
 * The agent's step limit as the model step's result carries it for the workflow (`agentMaxSteps`):
 * its `maxSteps`, or nothing for an agent without a bound (`stopWhen` set, `maxSteps` not). Left
 * out rather than sent as a stand-in: the result is JSON, where `Infinity` would arrive as `null`
 * (and `steps >= null` ends every run), and every step's result stays in the history, where the
 * largest safe integer would cost 14 bytes a step more than the default's `20`.
 */
export function stepLimitField(agent: Agent): Pick<ModelStepResult, 'agentMaxSteps' | 'agentCompensateOn'> {
  // The agent's compensation policy travels the same way, and only when the agent sets one.
  const compensateOn = agent.compensateOn === undefined ? {} : { agentCompensateOn: [...agent.compensateOn] };
  return Number.isFinite(agent.maxSteps) ? { agentMaxSteps: agent.maxSteps, ...compensateOn } : compensateOn;
}

/**
 * The model step's answer when a stop condition is met before its model call: no model call, no
 * text (the step stores only the last step's tool results, closing the conversation); the workflow
 * ends the run with the steps it has (its text stays the last step's, as the AI SDK's result does),
 * so it carries no step limit either.
 */
export function stoppedStep(): ModelStepResult {
  return { stopped: true, text: '', finishReason: 'stop', toolCalls: [] };
}
