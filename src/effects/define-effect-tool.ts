import type { Tool, ToolExecuteFunction, ToolExecutionOptions } from 'ai';
import type { ToolContext } from '../context/tool-context.js';
import { InvalidEffectToolError } from '../errors/errors.js';

/**
 * Brand that marks effect tools; a `Symbol.for` so that copies of the library in other realms agree.
 * An enumerable own property, so that `{ ...commentTool, description: '…' }` is still an effect
 * tool (JSON and the AI SDK ignore symbol keys, so it is never serialised or sent to a model).
 */
export const EFFECT_TOOL = Symbol.for('@chamvi/temporal/effect-tool');

/** The optional hooks an effect tool adds to an AI SDK tool definition. @public */
export interface EffectToolHooks<INPUT, OUTPUT, CONTEXT extends ToolContext = ToolContext> {
  /**
   * The effect key of a call: calls with equal keys are one effect, applied at most once.
   * Default: `<ctx.run.runId>:<toolName>:<sha256 of the canonical JSON input>`. Must return a
   * non-empty string. `options` are the AI SDK call options (`toolCallId`, `messages`); key by
   * {@link stepIndex} when a redone step may produce different input.
   */
  effectKey?: (input: INPUT, ctx: CONTEXT, options: ToolExecutionOptions<CONTEXT>) => string | PromiseLike<string>;
  /**
   * Asked before `execute` when the store holds no result for the key: does the effect already
   * exist remotely (applied by an earlier attempt that crashed before its result was recorded)?
   * Any answer other than `undefined` (`null` included) is recorded as the call's result with
   * origin `reconciled`, and `execute` does not run. Throwing records nothing; throw
   * `EffectOutcomeUnknownError` when the remote cannot tell yet.
   */
  // NoInfer: OUTPUT comes from execute; inferred from here, `async () => undefined` made it Promise<undefined>.
  alreadyApplied?: (
    key: string,
    input: INPUT,
    ctx: CONTEXT,
  ) => NoInfer<OUTPUT> | undefined | PromiseLike<NoInfer<OUTPUT> | undefined>;
  /**
   * Undoes what `execute` did (deletes the comment, removes the label, reverts the push), given the
   * recorded result of the call, its input and the run's context. Runs when the run's policy says
   * so (`compensateOn`) or on `rollbackRun`, for applied calls only, in reverse order of
   * application. A compensation is an effect itself, keyed `<key>:compensate` (`ctx.effect.key`),
   * and runs through the same protocol: recorded, claim, `alreadyCompensated`, compensate, record;
   * so it applies at most once where `alreadyCompensated` can see the undo. What it returns is
   * recorded (JSON). Throwing records nothing; the compensation is retried, then reported
   * `compensation-failed`.
   * @beta
   */
  compensate?: (result: NoInfer<OUTPUT>, input: INPUT, ctx: CONTEXT) => unknown;
  /**
   * Asked before `compensate` when the store holds no record of the compensation: is the undo
   * already done remotely (by an attempt that crashed before recording it)? Any answer other than
   * `undefined` is recorded as the compensation's result (origin `reconciled`) and `compensate`
   * does not run. `key` is the compensation's key (`<key>:compensate`); the original's is
   * `ctx.effect.compensates`.
   * @beta
   */
  alreadyCompensated?: (key: string, input: INPUT, ctx: CONTEXT) => unknown;
}

/** What {@link defineEffectTool} takes: an AI SDK tool definition with `execute`, plus the hooks. @public */
export type EffectToolDefinition<INPUT, OUTPUT, CONTEXT extends ToolContext = ToolContext> = Tool<
  INPUT,
  OUTPUT,
  CONTEXT
> & {
  execute: ToolExecuteFunction<INPUT, OUTPUT, CONTEXT>;
} & EffectToolHooks<INPUT, OUTPUT, CONTEXT>;

/**
 * An AI SDK tool carrying the effect brand; usable anywhere a tool is. The brand (the `EFFECT_TOOL`
 * symbol, an enumerable own property that a spread copies) is a runtime mark checked by
 * {@link isEffectTool}; it is left out of the type so that declaration files of modules exporting
 * effect tools can name it.
 * @public
 */
export type EffectTool<
  INPUT = unknown,
  OUTPUT = unknown,
  CONTEXT extends ToolContext = ToolContext,
> = EffectToolDefinition<INPUT, OUTPUT, CONTEXT>;

/**
 * Defines an effect tool: an AI SDK tool whose side effect applies at most once per effect key.
 *
 * Takes the same definition as the AI SDK's `tool()` plus the optional hooks `effectKey` and
 * `alreadyApplied`. On its own the result is an ordinary tool; the engine (`runAgent`, the
 * Temporal activities, or {@link wrapToolsForRun}) wraps it so that every call runs the effect
 * protocol: recorded result, else `alreadyApplied`, else `execute` and record.
 *
 * A spread keeps the brand: `{ ...commentTool, description: '…' }` is an effect tool with the same
 * hooks (in TypeScript add `as typeof commentTool`: AI SDK 7's `Tool` union takes no spread of a
 * tool without a cast). A copy made field by field (or a `tool()` given `effectKey`) is not, and the engine refuses
 * it rather than run it without the protocol (see {@link assertNoStrayHooks}).
 *
 * @throws InvalidEffectToolError when `execute` is missing or a hook is not a function.
 * @public
 */
export function defineEffectTool<INPUT, OUTPUT, CONTEXT extends ToolContext = ToolContext>(
  definition: EffectToolDefinition<INPUT, OUTPUT, CONTEXT>,
): EffectTool<INPUT, OUTPUT, CONTEXT> {
  const def = definition as Partial<EffectToolDefinition<INPUT, OUTPUT, CONTEXT>> | undefined;
  if (typeof def !== 'object' || def === null) {
    throw new InvalidEffectToolError('defineEffectTool expects a tool definition object (the same as tool() takes).');
  }
  if (typeof def.execute !== 'function') {
    throw new InvalidEffectToolError(
      'defineEffectTool: execute is missing. An effect tool must apply its effect itself; add execute(input, { context }) to the definition.',
    );
  }
  for (const hook of EFFECT_HOOKS) {
    if (def[hook] !== undefined && typeof def[hook] !== 'function') {
      throw new InvalidEffectToolError(
        `defineEffectTool: ${hook} must be a function when given (got ${typeof def[hook]}).`,
      );
    }
  }
  return { ...definition, [EFFECT_TOOL]: true } as EffectTool<INPUT, OUTPUT, CONTEXT>;
}

const EFFECT_HOOKS = ['effectKey', 'alreadyApplied', 'compensate', 'alreadyCompensated'] as const;

/** Whether `value` is an effect tool (by brand, so it works across realms and library copies). */
export function isEffectTool(value: unknown): value is EffectTool<unknown, unknown, ToolContext> {
  return typeof value === 'object' && value !== null && (value as { [EFFECT_TOOL]?: unknown })[EFFECT_TOOL] === true;
}

/**
 * Refuses a tool that carries `effectKey` or `alreadyApplied` but no effect brand: a copy of an
 * effect tool that lost it (built field by field, or by a cloner that skips symbol keys), or a
 * `tool()` given the hooks. Run as a plain tool, its `execute` would apply the effect on every call
 * and every retry (at-least-once on Temporal) with the hooks silently ignored.
 *
 * @param where who checks, for the message (`defineAgent("triage")`, `wrapToolsForRun`).
 * @throws InvalidEffectToolError naming the tool and the fix.
 */
export function assertNoStrayHooks(toolName: string, tool: unknown, where: string): void {
  if (typeof tool !== 'object' || tool === null || isEffectTool(tool)) return;
  const hooks = EFFECT_HOOKS.filter((hook) => (tool as Partial<EffectToolHooks<unknown, unknown>>)[hook] !== undefined);
  if (hooks.length === 0) return;
  throw new InvalidEffectToolError(
    `${where}: tool "${toolName}" has ${hooks.join(' and ')} but is not an effect tool (it lost the effect-tool brand: copied field by field, or defined with tool() instead of defineEffectTool()). As a plain tool it would run execute on every call and retry, ignoring ${hooks.join(' and ')}. Define it with defineEffectTool({ ...${toolName}, description: '…' }) (a spread of an effect tool keeps the brand), or drop ${hooks.join(' and ')} if it has no effect to guard.`,
  );
}
