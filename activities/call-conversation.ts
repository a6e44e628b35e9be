import type { ModelMessage, ToolExecutionOptions } from 'ai';
import type { ConversationLog } from '../src/conversation/conversation-log.js';
import { messagesOf } from '../src/conversation/conversation-log.js';
import type { ToolContext } from '../src/context/tool-context.js';
import type { ToolCallInput } from '../common/index.js';
import { toolCallOptions } from './activity-context.js';

/**
 * The AI SDK call options of a tool call made from an activity. For a call whose conversation
 * comes by reference, `messages` is a getter: the conversation's entries are in hand before the
 * tool runs (this worker's cache, else one read of the store), and become messages only when the
 * tool reads `options.messages`, fresh for each call (an effect tool's `execute` has the step as
 * `options.context.effect.step` without reading them: the effect-call activity hands the protocol the
 * reference's count). An input that carries `messages` (a workflow-side tool of `effectToolCalls`)
 * gets them as they are.
 */
export async function callOptionsFor(
  input: ToolCallInput,
  ctx: ToolContext,
  log: ConversationLog,
): Promise<ToolExecutionOptions<ToolContext>> {
  const ref = input.conversation;
  if (ref === undefined) return toolCallOptions(input.toolCallId, input.messages ?? [], ctx);
  const entries = await log.load(input.runId, ref.head);
  const options = { toolCallId: input.toolCallId, abortSignal: ctx.run.signal, context: ctx };
  let messages: ModelMessage[] | undefined;
  Object.defineProperty(options, 'messages', {
    enumerable: true,
    configurable: true,
    get: () => (messages ??= messagesOf(entries) as ModelMessage[]),
    set: (value: ModelMessage[]) => {
      messages = value;
    },
  });
  return options as ToolExecutionOptions<ToolContext>;
}
