import { Context } from '@temporalio/activity';
import { isStepCount, type ModelMessage, type ToolSet } from 'ai';
import { agentToolOf, agentToolPrompt, childCallId } from '../src/agent/agent-tool.js';
import type { RunStreamStore } from '../src/stream/run-stream-store.js';
import { callModel } from './model-stream.js';
import { offeredTools } from './offered-tools.js';
import { resolveApproval } from '../src/approvals/approval-policy.js';
import { isEffectTool } from '../src/effects/define-effect-tool.js';
import { inputFingerprint } from '../src/effects/effect-key.js';
import { resolveEffectKey } from '../src/effects/effect-key.js';
import type { ApprovalPlan, JsonMessage, ModelStepInput, ModelStepResult, ToolCallPlan } from '../common/index.js';
import { activityToolContext, keepHeartbeating, toolCallOptions } from './activity-context.js';
import type { ToolContext } from '../src/context/tool-context.js';
import type { AgentRegistration, AgentRegistry } from './agent-registry.js';
import { withFailureMapping } from './failures.js';
import { stepConversation } from './step-conversation.js';
import type { ConversationLog } from '../src/conversation/conversation-log.js';
import { modelCallFailure, modelName } from './model-call-error.js';
import { mergeActivityOptions } from '../common/activity-options.js';
import { toolsContextFor } from '../src/agent/tools-context.js';
import { resolveStepSettings } from './step-settings.js';
import { assertUniqueToolCallIds } from './unique-tool-call-ids.js';
import { stepUsage } from './step-usage.js';
import { stepLimitField, stoppedStep } from './stopped-step.js';
import { runTraceCallId, stepTelemetry } from './tracing/step-telemetry.js';
import { annotateActivitySpan } from './tracing/open-telemetry-api.js';

/**
 * The model-step activity: exactly one model call, with the agent's AI SDK settings for the step
 * (`step-settings.ts`), or none when one of its stop conditions is met by the steps so far (the
 * run then ends; `stopped` in the result). The agent's tools are offered without their
 * `execute`, so the AI SDK returns the step's tool calls instead of running them; invalid calls
 * (unknown tool, input failing the schema) come back as tool errors for the model, never retried.
 * A step whose calls share an id fails the run (`DuplicateToolCallIdError`) before anything of it
 * is planned or stored.
 * For each valid call it plans the activity that will run it, with the effect key computed once
 * (so identical effect calls of the step can share one activity).
 *
 * The conversation comes by reference: the key of its last stored entry and the messages not
 * stored yet (the prompt, the last step's tool results). The step reads the rest from the
 * conversation log (this worker's cache, else the shared store), stores the new messages and the
 * model's answer as entries, and returns the new head, so its input and result stay the same size
 * however long the run gets.
 *
 * The AI SDK's own retries are off: provider errors a retry can fix (429, 5xx, network) are left
 * to Temporal's retry policy, honouring the provider's retry-after; the ones it cannot fix (no or
 * a refused API key, no such model, an invalid request) fail the step non-retryably
 * (`ModelCallRejectedError`), which fails the run at once. The step heartbeats while the provider
 * call is in flight. With a run stream (`stream`), the call streams and writes its deltas to it
 * as they arrive (see `streamModelCall`); the step's result is the same.
 *
 * Telemetry: the activity's span gets the agent's name, the run id and the step number; the model
 * call reports to the agent's AI SDK integrations as a step of the run (`step-telemetry.ts`), and
 * a step asked to (`captureTrace`) answers the run's tracing identity (`trace`) for the workflow.
 */
export function createModelStepActivity(registry: AgentRegistry, log: ConversationLog, stream?: RunStreamStore) {
  return async function modelStep(input: ModelStepInput): Promise<ModelStepResult> {
    return withFailureMapping(async () => {
      const registration = registry.get(input.agent);
      const { agent } = registration;
      const ctx = activityToolContext(input);
      await annotateActivitySpan({
        'gen_ai.agent.name': agent.name,
        'chamvi.run.id': input.runId,
        'chamvi.step': input.step,
      });
      const traced = stepTelemetry(agent.name, agent.telemetry, {
        callId: runTraceCallId(Context.current().info.workflowExecution?.workflowId ?? 'standalone', input.runId),
        step: input.step,
      });
      const offered = offeredTools(agent.tools);
      const stop = keepHeartbeating();
      try {
        const conversation = await stepConversation(input, log);
        // The agent's settings for this step (agent settings table in the README); a met stop condition ends the run here.
        const settings = await resolveStepSettings(agent, input, conversation.messages);
        if (settings.stop) {
          // No model step follows: the last step's tool results are stored and the conversation closed.
          await conversation.answer([], 'last');
          return stoppedStep();
        }
        // With a run stream the call streams (streamText) and writes its deltas as they come; same result.
        const result = await callModel(
          {
            ...settings.call,
            telemetry: traced.telemetry,
            messages: conversation.messages as unknown as ModelMessage[],
            tools: offered,
            toolsContext: toolsContextFor(offered, ctx),
            stopWhen: isStepCount(1),
            maxRetries: 0,
            abortSignal: ctx.run.signal,
          },
          stream,
          input,
        ).catch((error: unknown) => {
          throw modelCallFailure(error, { agent: agent.name, step: input.step, model: modelName(settings.model()) });
        });
        assertUniqueToolCallIds(
          result.toolCalls,
          `Model step ${input.step} of run ${input.runId} (agent ${agent.name})`,
        );
        const toolCalls: ToolCallPlan[] = [];
        const refusedCalls: ModelStepResult['refusedCalls'] = [];
        for (const call of result.toolCalls) {
          if ((call as { invalid?: boolean }).invalid === true) continue;
          const tool = agent.tools[call.toolName];
          if (tool === undefined || typeof tool.execute !== 'function') {
            refusedCalls.push({
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              message: `Tool ${call.toolName} has no execute function, so it cannot run in an agent workflow.`,
            });
            continue;
          }
          const options = mergeActivityOptions(registration.toolDefaults, registration.tools?.[call.toolName]);
          const approved = await approvalPlan(registration, tool, call, ctx, conversation.messages);
          const sub = agentToolOf(tool);
          if (sub !== undefined) {
            // A prompt() that throws is the tool's bug: the model is told, the step goes on.
            let prompt: string;
            try {
              prompt = agentToolPrompt(call.toolName, sub, call.input);
            } catch (error) {
              refusedCalls.push({
                toolCallId: call.toolCallId,
                toolName: call.toolName,
                message: error instanceof Error ? error.message : String(error),
              });
              continue;
            }
            toolCalls.push({
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              input: call.input,
              kind: 'agent',
              child: { agent: sub.agent.name, prompt, id: childCallId(call.toolName, input.step, call.input) },
              ...approved,
            });
            continue;
          }
          if (!isEffectTool(tool)) {
            toolCalls.push({
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              input: call.input,
              kind: 'plain',
              ...(Object.keys(options).length > 0 ? { options } : {}),
              ...approved,
            });
            continue;
          }
          const key = await resolveEffectKey({
            tool,
            toolName: call.toolName,
            input: call.input,
            ctx,
            options: toolCallOptions(call.toolCallId, conversation.messages, ctx),
          });
          toolCalls.push({
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            input: call.input,
            kind: 'effect',
            key,
            ...(Object.keys(options).length > 0 ? { options } : {}),
            ...approved,
          });
        }
        const response = result.response.messages as unknown as JsonMessage[];
        // The model's final answer, or the step limit, closes the run's conversation: its retention starts.
        const last = input.step + 1 >= (input.maxSteps ?? agent.maxSteps);
        const answered = toolCalls.length === 0 && refusedCalls.length === 0 ? 'answer' : 'open';
        const stored = await conversation.answer(response, last ? 'last' : answered);
        const trace = input.captureTrace === true ? traced.captured() : [];
        // Every byte here is in the history once per step: empty lists and option sets are left out.
        return {
          conversation: stored,
          text: result.text,
          finishReason: result.finishReason,
          toolCalls,
          ...(refusedCalls.length > 0 ? { refusedCalls } : {}),
          ...stepLimitField(agent),
          ...(await settings.output(result)),
          ...(trace.length > 0 ? { trace } : {}),
          usage: stepUsage(agent.name, result, settings.model()),
        };
      } finally {
        stop();
      }
    });
  };
}

/**
 * The approval fields of a call's plan, from the registration's `toolApproval` or the tool's
 * `needsApproval`: `approval` when it needs a decision or is refused, `approvedByPolicy` when the
 * rule approved it, none when no rule applies (`not-applicable`).
 */
async function approvalPlan(
  registration: AgentRegistration,
  tool: ToolSet[string],
  call: { toolCallId: string; toolName: string; input: unknown },
  ctx: ToolContext,
  messages: JsonMessage[],
): Promise<Pick<ToolCallPlan, 'approval' | 'approvedByPolicy'>> {
  const resolved = await resolveApproval(
    tool,
    call,
    ctx,
    messages as unknown as ModelMessage[],
    registration.toolApproval,
  );
  const reason = resolved.reason !== undefined ? { reason: resolved.reason } : {};
  if (resolved.status === 'approved') return { approvedByPolicy: reason };
  if (resolved.status !== 'user-approval' && resolved.status !== 'denied') return {};
  const approval: ApprovalPlan = {
    status: resolved.status,
    ...reason,
    ...(registration.approvalTimeout !== undefined ? { timeout: registration.approvalTimeout } : {}),
    ...(registration.onApprovalTimeout !== undefined ? { onTimeout: registration.onApprovalTimeout } : {}),
    // Hashed here: workflow code cannot, and the pending approval must show what a token binds.
    ...(resolved.status === 'user-approval' ? { fingerprint: inputFingerprint(call.input) } : {}),
  };
  return { approval };
}
