/** The part of the AI SDK's tool call options that {@link stepIndex} reads. @public */
export interface StepIndexOptions {
  /** The messages the model step was called with; their assistant messages count the steps. */
  readonly messages: ReadonlyArray<{ readonly role: string }>;
}

/**
 * The model step a tool call belongs to: the number of assistant messages in `options.messages`
 * (the messages sent to the model for the step that produced the call). In an effect tool's
 * `execute` it is `options.context.effect.step`, which the engine sets without reading the messages.
 *
 * A step the model redoes after a crash may produce different input (a different comment body),
 * but it sees the same history, so this number stays the same. Use it in a custom `effectKey`
 * to key an effect by step: `` `${ctx.run.runId}:comment:${input.issue}:${stepIndex(options)}` ``.
 * @public
 */
export function stepIndex(options: StepIndexOptions): number {
  const step = (options as { context?: { effect?: { step?: unknown } } }).context?.effect?.step;
  if (typeof step === 'number') return step;
  let count = 0;
  // Options built by hand may lack messages: then there are none to count.
  for (const message of options.messages ?? []) if (message.role === 'assistant') count++;
  return count;
}
