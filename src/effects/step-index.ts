/** The part of the AI SDK's tool call options that {@link stepIndex} reads. @public */
export interface StepIndexOptions {
  readonly messages: ReadonlyArray<{ readonly role: string }>;
}

const STEP_INDEX = Symbol.for('@chamvi/temporal/step-index');

/**
 * The call options with their step index attached (non-enumerable), for options whose `messages`
 * are read from the store only when a tool looks: {@link stepIndex} then answers without reading
 * them. The engine attaches it; the number is the count {@link stepIndex} would make.
 */
export function withStepIndex<T extends object>(options: T, step: number): T {
  return Object.defineProperty(options, STEP_INDEX, { value: step, enumerable: false });
}

/**
 * The model step a tool call belongs to: the number of assistant messages in `options.messages`
 * (the messages sent to the model for the step that produced the call).
 *
 * A step the model redoes after a crash may produce different input (a different comment body),
 * but it sees the same history, so this number stays the same. Use it in a custom `effectKey`
 * to key an effect by step: `` `${ctx.run.runId}:comment:${input.issue}:${stepIndex(options)}` ``.
 * @public
 */
export function stepIndex(options: StepIndexOptions): number {
  const attached = (options as { [STEP_INDEX]?: unknown })[STEP_INDEX];
  if (typeof attached === 'number') return attached;
  let count = 0;
  for (const message of options.messages) if (message.role === 'assistant') count++;
  return count;
}
