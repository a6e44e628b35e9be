import { generateText, isStepCount, type ModelMessage, type Tool, type ToolSet } from 'ai';
import { isEffectTool } from '../src/effects/define-effect-tool.js';
import { resolveEffectKey } from '../src/effects/effect-protocol.js';
import type { JsonMessage, ModelStepInput, ModelStepResult, ToolCallPlan } from '../workflows/types.js';
import { activityToolContext, keepHeartbeating, toolCallOptions } from './activity-context.js';
import type { AgentRegistry } from './agent-registry.js';
import { withFailureMapping } from './failures.js';

/**
 * The model-step activity: exactly one model call. The agent's tools are offered without their
 * `execute`, so the AI SDK returns the step's tool calls instead of running them; invalid calls
 * (unknown tool, input failing the schema) come back as tool errors for the model, never retried.
 * For each valid call it plans the activity that will run it, with the effect key computed once
 * (so identical effect calls of the step can share one activity).
 *
 * Provider errors are left to Temporal's retry policy (the AI SDK's own retries are off).
 */
export function createModelStepActivity(registry: AgentRegistry) {
  return async function modelStep(input: ModelStepInput): Promise<ModelStepResult> {
    return withFailureMapping(async () => {
      const registration = registry.get(input.agent);
      const { agent } = registration;
      const ctx = activityToolContext(input);
      const offered: ToolSet = {};
      for (const [name, tool] of Object.entries(agent.tools)) offered[name] = { ...tool, execute: undefined } as ToolSet[string];
      const stop = keepHeartbeating();
      try {
        const result = await generateText({
          model: agent.model,
          ...(agent.instructions !== undefined ? { instructions: agent.instructions } : {}),
          messages: input.messages as unknown as ModelMessage[],
          tools: offered,
          toolsContext: Object.fromEntries(Object.keys(offered).map((name) => [name, ctx])),
          stopWhen: isStepCount(1),
          maxRetries: 0,
          abortSignal: ctx.run.signal,
        } as unknown as Parameters<typeof generateText>[0]);
        const toolCalls: ToolCallPlan[] = [];
        const refusedCalls: ModelStepResult['refusedCalls'] = [];
        for (const call of result.toolCalls) {
          if ((call as { invalid?: boolean }).invalid === true) continue;
          const tool = agent.tools[call.toolName] as Tool | undefined;
          if (tool === undefined || typeof tool.execute !== 'function') {
            refusedCalls.push({
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              message: `Tool ${call.toolName} has no execute function, so it cannot run in an agent workflow.`,
            });
            continue;
          }
          const options = { ...registration.toolDefaults, ...registration.tools?.[call.toolName] };
          if (!isEffectTool(tool)) {
            toolCalls.push({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.input, kind: 'plain', options });
            continue;
          }
          const key = await resolveEffectKey({
            tool,
            toolName: call.toolName,
            input: call.input,
            ctx,
            options: toolCallOptions(call.toolCallId, input.messages, ctx),
          });
          toolCalls.push({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.input, kind: 'effect', key, options });
        }
        return {
          responseMessages: result.response.messages as unknown as JsonMessage[],
          text: result.text,
          finishReason: result.finishReason,
          toolCalls,
          refusedCalls,
          agentMaxSteps: agent.maxSteps,
          usage: { inputTokens: result.usage.inputTokens ?? 0, outputTokens: result.usage.outputTokens ?? 0 },
        };
      } finally {
        stop();
      }
    });
  };
}
