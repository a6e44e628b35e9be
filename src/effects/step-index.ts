/** The part of the AI SDK's tool call options that {@link stepIndex} reads. */
export interface StepIndexOptions {
  readonly messages: ReadonlyArray<{ readonly role: string }>;
}

/**
 * The model step a tool call belongs to: the number of assistant messages in `options.messages`
 * (the messages sent to the model for the step that produced the call).
 *
 * A step the model redoes after a crash may produce different input (a different comment body),
 * but it sees the same history, so this number stays the same. Use it in a custom `effectKey`
 * to key an effect by step: `` `${ctx.run.runId}:comment:${input.issue}:${stepIndex(options)}` ``.
 */
export function stepIndex(options: StepIndexOptions): number {
  let count = 0;
  for (const message of options.messages) if (message.role === 'assistant') count++;
  return count;
}
