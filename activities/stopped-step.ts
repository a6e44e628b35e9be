import type { Agent } from '../src/agent/define-agent.js';
import type { ModelStepResult } from '../common/index.js';

/**
 * The agent's step limit as the workflow reads it (`agentMaxSteps`): its `maxSteps`, or, for an
 * agent without a bound (`stopWhen` set, `maxSteps` not), the largest safe integer, because the
 * result is JSON, where `Infinity` would arrive as `null` (and `steps >= null` ends every run).
 */
export function stepLimit(agent: Agent): number {
  return Number.isFinite(agent.maxSteps) ? agent.maxSteps : Number.MAX_SAFE_INTEGER;
}

/**
 * The model step's answer when a stop condition is met before its model call: no model call, no
 * text, nothing stored; the workflow ends the run with the steps it has (its text stays the last
 * step's, as the AI SDK's result does).
 */
export function stoppedStep(agent: Agent): ModelStepResult {
  return { stopped: true, text: '', finishReason: 'stop', toolCalls: [], agentMaxSteps: stepLimit(agent) };
}
