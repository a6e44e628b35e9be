import type { CallConversationRef, ConversationRef, JsonMessage, ModelStepResult } from '../common/index.js';

/**
 * The conversation as the workflow holds it: by reference. The key of its last stored entry and
 * the messages not stored yet (the prompt, then the last step's tool results), which the next
 * model step stores; each step adds the same few bytes to the history however long the run.
 */
export class ConversationState {
  private head: string | undefined;
  private pending: JsonMessage[];

  /** Starts from a checkpoint's conversation, or a fresh run's (no head; the prompt pending). */
  constructor(start: ConversationRef) {
    this.head = start.head;
    this.pending = [...start.pending];
  }

  /** The conversation field of the next model step's input, of a checkpoint, the progress query and the run's output. */
  snapshot(): { conversation: ConversationRef } {
    return { conversation: { ...(this.head !== undefined ? { head: this.head } : {}), pending: this.pending } };
  }

  /** Takes in a step's answer; returns the conversation its tool calls were made in. */
  answered(result: ModelStepResult): CallConversationRef {
    const step = result.conversation;
    if (step === undefined) throw conversationInHistory('its model step answered without a conversation reference');
    this.head = step.head;
    this.pending = step.pending === undefined ? [] : [step.pending];
    return step.prompt;
  }

  /** Adds the step's tool results in call order, into the tool message the model step may have started (invalid calls). */
  addToolResults(answers: ReadonlyArray<{ toolCallId: string; toolName: string; output: unknown }>): void {
    const parts = answers.map(({ toolCallId, toolName, output }) => ({
      type: 'tool-result',
      toolCallId,
      toolName,
      output,
    }));
    const last = this.pending[this.pending.length - 1];
    if (last !== undefined && last.role === 'tool' && Array.isArray(last.content)) {
      this.pending[this.pending.length - 1] = { ...last, content: [...(last.content as unknown[]), ...parts] };
    } else {
      this.pending.push({ role: 'tool', content: parts });
    }
  }

  /** Whether the model is owed an answer: the conversation ends with tool results (or errors for invalid calls). */
  endsWithToolMessage(): boolean {
    return this.pending[this.pending.length - 1]?.role === 'tool';
  }
}

/**
 * A run that keeps its conversation in the event history (begun by, or a step answered by, a
 * worker of the release before the conversation moved to the store) cannot go on here. A plain
 * `Error` fails the workflow task, not the run: the run waits, and goes on once workers that can
 * run it poll the task queue again.
 */
export function conversationInHistory(what: string): Error {
  return new Error(
    `This run cannot go on on these workers: ${what}, so it keeps its conversation in the event history, as @chamvi/temporal 0.2 did. Run 0.2 workers on this task queue until its 0.2 runs have closed, then upgrade every worker (docs/migrating.md). The run waits meanwhile.`,
  );
}
