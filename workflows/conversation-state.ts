import { InvalidAgentInputError } from '../src/errors/errors.js';
import { toFailure } from '../common/to-failure.js';
import type { CallConversationRef, ConversationRef, JsonMessage, ModelStepResult } from '../common/index.js';

/** The conversation a step's tool calls were made in: by reference (0.3 on), or whole (runs begun before). */
export type CallConversation =
  | { readonly conversation: CallConversationRef; readonly messages?: undefined }
  | { readonly messages: JsonMessage[]; readonly conversation?: undefined };

/** Where a run starts or resumes: a checkpoint's conversation fields. */
export interface ConversationStart {
  readonly conversation?: ConversationRef;
  readonly messages?: JsonMessage[];
}

/**
 * The conversation as the workflow holds it. In runs begun since 0.3, by reference: the key of
 * its last stored entry and the messages not stored yet (the last step's tool results), which the
 * next model step stores; each step adds the same few bytes to the history however long the run.
 *
 * Runs begun before (0.2) carried it whole through every activity input; their histories must
 * still replay, and those in flight finish on new workers. Such a run is told by its first model
 * step's answer (Temporal's replay compares an activity's type, not its input): an answer with
 * the 0.2 `responseMessages` and no reference means the run holds the conversation whole from then
 * on, exactly as it did. No marker is needed, so new runs pay nothing for the old ones.
 */
export class ConversationState {
  private mode: 'undecided' | 'stored' | 'inline';
  private head: string | undefined;
  private pending: JsonMessage[];
  private all: JsonMessage[] | undefined;

  /** Starts from a checkpoint's (or a fresh run's) conversation: by reference, or whole (a prompt, a 0.2 checkpoint). */
  constructor(start: ConversationStart) {
    this.mode = start.conversation !== undefined ? 'stored' : 'undecided';
    this.head = start.conversation?.head;
    this.pending = [...(start.conversation?.pending ?? start.messages ?? [])];
  }

  /** Whether the conversation is held whole (the replay of a run begun before 0.3). */
  get inlined(): boolean {
    return this.mode === 'inline';
  }

  private ref(): ConversationRef {
    return { ...(this.head !== undefined ? { head: this.head } : {}), pending: this.pending };
  }

  /** The conversation field of the next model step's input. */
  modelStepInput(): { conversation: ConversationRef } | { messages: JsonMessage[] } {
    return this.all !== undefined ? { messages: this.all } : { conversation: this.ref() };
  }

  /** Takes in a step's answer; returns the conversation its tool calls were made in. */
  answered(result: ModelStepResult): CallConversation {
    if (this.mode === 'undecided') {
      this.mode = result.conversation === undefined && result.responseMessages !== undefined ? 'inline' : 'stored';
      if (this.mode === 'inline') this.all = this.pending;
    }
    if (this.all !== undefined) {
      const seen = [...this.all];
      this.all.push(...(result.responseMessages ?? []));
      return { messages: seen };
    }
    const step = result.conversation;
    if (step === undefined) {
      throw toFailure(
        new InvalidAgentInputError(
          'The model step answered without a conversation reference: a worker of a version before 0.3 ran it. Upgrade every worker of the task queue, then start the run again.',
        ),
      );
    }
    this.head = step.head;
    this.pending = step.pending === undefined ? [] : [step.pending];
    return { conversation: step.prompt };
  }

  /** Adds the step's tool results in call order, into the tool message the model step may have started (invalid calls). */
  addToolResults(answers: ReadonlyArray<{ toolCallId: string; toolName: string; output: unknown }>): void {
    appendToolResults(this.all ?? this.pending, answers);
  }

  /** Whether the model is owed an answer: the conversation ends with tool results (or errors for invalid calls). */
  endsWithToolMessage(): boolean {
    const messages = this.all ?? this.pending;
    return messages[messages.length - 1]?.role === 'tool';
  }

  /** The conversation fields of a checkpoint, the progress query and the run's output. */
  snapshot(): { conversation: ConversationRef } | { messages: JsonMessage[] } {
    return this.all !== undefined ? { messages: this.all } : { conversation: this.ref() };
  }
}

/** Adds the step's tool results in call order, into the tool message the model step may have started (invalid calls). */
function appendToolResults(
  messages: JsonMessage[],
  answers: ReadonlyArray<{ toolCallId: string; toolName: string; output: unknown }>,
): void {
  const parts = answers.map(({ toolCallId, toolName, output }) => ({
    type: 'tool-result',
    toolCallId,
    toolName,
    output,
  }));
  const last = messages[messages.length - 1];
  if (last !== undefined && last.role === 'tool' && Array.isArray(last.content)) {
    messages[messages.length - 1] = { ...last, content: [...(last.content as unknown[]), ...parts] };
  } else {
    messages.push({ role: 'tool', content: parts });
  }
}
