import { ChamviError } from './chamvi-error.js';

/**
 * An AI SDK agent setting chamvi cannot honour on Temporal: a callback that would run again on
 * every activity retry and workflow replay (`onStepFinish`, `onEnd`, ...), a setting Temporal
 * already owns (`maxRetries`, a run-wide `timeout`), a value of the wrong kind (a stop condition
 * that is not a function), a setting name the AI SDK does not have, or a `prepareStep` result that
 * asks for what a model step cannot do (`toolsContext`, `experimental_sandbox`). `setting` names it;
 * the message says what to do instead.
 *
 * Thrown by `defineAgent` when the agent is defined (nothing is silently ignored), and by the model
 * step for a `prepareStep` result, where it fails the run: the same function returns the same thing
 * on a retry. Not retryable.
 */
export class UnsupportedAgentSettingError extends ChamviError {
  static override readonly errorName = 'UnsupportedAgentSettingError';
  /** The setting's name, as in AI SDK 7's `ToolLoopAgentSettings` (or `prepareStep.<field>`). */
  readonly setting: string;
  constructor({ setting, message }: { readonly setting: string; readonly message: string }) {
    super(message);
    this.setting = setting;
  }
}
