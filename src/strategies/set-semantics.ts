import type { ToolContext } from '../context/tool-context.js';
import { defineEffectTool, type EffectTool, type EffectToolDefinition } from '../effects/define-effect-tool.js';
import { InvalidEffectToolError } from '../errors/errors.js';

/**
 * Defines an effect tool whose remote operation has set semantics: applying it again changes
 * nothing (adding a label that is already there, putting a value that is already set, adding a
 * member to a set). Such a tool needs no reconciliation: when a crash falls between the effect
 * and the record, the retry simply runs `execute` again, and the remote state is the same as
 * after one application. The effect store still records the result, so a recorded call does not
 * reach the remote at all.
 *
 * This is `defineEffectTool` without `alreadyApplied` (passing one throws
 * {@link InvalidEffectToolError}: it would only cost a remote read). Declaring the tool this way
 * states the assumption in code review: only use it when a second application is invisible.
 * Toggles, counters, appends ("add a comment", "push a commit") and "remove then add" sequences
 * are not set semantics; use a marker, remote state or an idempotency key for those.
 * @public
 */
export function defineSetEffectTool<INPUT, OUTPUT, CONTEXT extends ToolContext = ToolContext>(
  definition: EffectToolDefinition<INPUT, OUTPUT, CONTEXT> & { readonly alreadyApplied?: never },
): EffectTool<INPUT, OUTPUT, CONTEXT> {
  if ((definition as { alreadyApplied?: unknown }).alreadyApplied !== undefined) {
    throw new InvalidEffectToolError(
      'defineSetEffectTool: a set-semantics tool needs no alreadyApplied (applying it twice changes nothing). Remove it, or use defineEffectTool if applying twice is visible.',
    );
  }
  return defineEffectTool<INPUT, OUTPUT, CONTEXT>(definition);
}
