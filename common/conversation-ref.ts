// The conversation of an agent run by reference, as the workflow and the activities pass it: the
// messages live in the workers' store as content-addressed entries (see src/conversation), and
// the event history carries only the key of the last one and what is not stored yet.
import type { JsonMessage } from './json-messages.js';

/**
 * Where a run's conversation stands between two model steps: the key of its last stored entry
 * (absent before the first step) and the messages not stored yet (before the first step, the
 * prompt; after a step, its tool results). The next model step stores `pending` after `head`.
 * @public
 */
export interface ConversationRef {
  /** Key of the conversation's last stored entry; absent before anything was stored. */
  readonly head?: string;
  /** Messages after `head` that no model step stored yet (tool results). */
  readonly pending: JsonMessage[];
}

/**
 * The conversation a tool call was made in, by reference: what the model saw for the call's step
 * (the AI SDK's `options.messages`, without the step's answer).
 */
export interface CallConversationRef {
  /** Key of the last stored entry of what the model saw. */
  readonly head: string;
  /** How many assistant messages it holds: the call's `stepIndex(options)`, known without loading it. */
  readonly assistantMessages: number;
}

/** What a model step did to the conversation. */
export interface ModelStepConversation {
  /** What the model saw: the conversation the step's tool calls are made in. */
  readonly prompt: CallConversationRef;
  /** Key of the conversation's last entry after the step's answer (the assistant message). */
  readonly head: string;
  /** A tool message the answer ends with (errors for invalid calls), not stored: the step's tool results join it. */
  readonly pending?: JsonMessage;
}
