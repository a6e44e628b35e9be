import { Context } from '@temporalio/activity';
import { chainEntries, conversationRoot, type ConversationEntry } from '../src/conversation/conversation-entry.js';
import { messagesOf, type ConversationLog } from '../src/conversation/conversation-log.js';
import type { AppendConversationOptions } from '../src/stores/conversation-store.js';
import { MAX_WRITE_ORDER } from '../src/stores/conversation-write-order.js';
import type { JsonMessage, ModelStepConversation, ModelStepInput } from '../common/index.js';

/** The conversation of one model step: what the model is sent, and how its answer is stored. */
export interface StepConversation {
  /** Every message the model is sent for this step, oldest first. */
  readonly messages: JsonMessage[];
  /**
   * Stores the step's new messages (the input's pending ones, then the answer, except a tool
   * message it ends with) in one write; resolves to the step's conversation result. The write
   * closes the run's conversation (its retention starts) when `end` is `last` (no model step
   * follows: the step limit, a met stop condition), or `answer` and the model answered without a
   * tool message for a next step.
   */
  answer(response: readonly JsonMessage[], end: 'answer' | 'last' | 'open'): Promise<ModelStepConversation>;
}

/**
 * The conversation a model-step input names: read from the log up to its head (this worker's
 * cache, else the store), with the pending messages chained after it.
 */
export async function stepConversation(input: ModelStepInput, log: ConversationLog): Promise<StepConversation> {
  const ref = input.conversation;
  const earlier = await log.load(input.runId, ref.head);
  const added = chainEntries(ref.head ?? conversationRoot(input.runId), ref.pending);
  const prompt: ConversationEntry | undefined = added[added.length - 1] ?? earlier[earlier.length - 1];
  if (prompt === undefined) throw new TypeError('model step: the conversation has no message to send to the model.');
  // Parsed from the entries, so that the model and the effect keys see exactly the messages a tool
  // call's activity reads back from the store.
  const messages = messagesOf([...earlier, ...added]) as JsonMessage[];
  let assistantMessages = 0;
  for (const message of messages) if (message.role === 'assistant') assistantMessages++;
  return {
    messages,
    async answer(response, end) {
      // A tool message the answer ends with (errors for invalid calls) stays with the workflow: the
      // step's tool results join it, and a stored entry is never rewritten.
      const last = response[response.length - 1];
      const pending = last?.role === 'tool' ? last : undefined;
      const answered = chainEntries(prompt.key, pending === undefined ? response : response.slice(0, -1));
      await log.append(input.runId, [...added, ...answered], {
        close: end === 'last' || (end === 'answer' && pending === undefined),
        ...writingExecution(input.continuedFrom),
      });
      return {
        prompt: { head: prompt.key, assistantMessages },
        head: answered[answered.length - 1]?.key ?? prompt.key,
        ...(pending !== undefined ? { pending } : {}),
      };
    },
  };
}

/**
 * The workflow execution this activity runs for, as the conversation store tracks who holds a
 * run's entries (`<workflowId>/<runId>`), the one it continues, and which of the execution's
 * writes this is: the activity's sequence number (its id, as the workflow SDK numbers the
 * activities it schedules without an explicit id; the agent loop gives none) and its attempt. So
 * an attempt that outlived its start-to-close timeout and stores its answer after the retry that
 * Temporal took cannot close (or reopen) the execution's hold. None outside a workflow; no order
 * for an activity id that is not such a number (a workflow of its own that named the activity).
 */
function writingExecution(
  continuedFrom: string | undefined,
): Pick<AppendConversationOptions, 'execution' | 'previousExecution' | 'writtenBy'> {
  const { workflowExecution: execution, activityId, attempt } = Context.current().info;
  if (execution === undefined) return {};
  const activity = /^[1-9][0-9]{0,9}$/.test(activityId) ? Number(activityId) : NaN;
  return {
    execution: `${execution.workflowId}/${execution.runId}`,
    ...(continuedFrom !== undefined ? { previousExecution: `${execution.workflowId}/${continuedFrom}` } : {}),
    ...(activity <= MAX_WRITE_ORDER ? { writtenBy: { activity, attempt } } : {}),
  };
}
