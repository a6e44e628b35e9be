import type { ToolExecutionOptions } from 'ai';
import type { ToolContext } from '../src/context/tool-context.js';
import { isEffectTool, type EffectTool } from '../src/effects/define-effect-tool.js';
import { defaultEffectKey } from '../src/effects/effect-key.js';
import { effectKeyOf } from '../src/effects/effect-key-of.js';
import { isAsyncIterable } from '../src/effects/effect-result.js';
import { currentActivity } from './activity-attempt.js';
import type { FaultHit, SeenCall } from './fault-injector.js';

/** How tools are wrapped for fault injection. @public */
export interface FaultyToolOptions {
  /** The attempt a hit reports outside a Temporal activity (inside one, Temporal's attempt counts). */
  readonly attempt?: number;
}

/** What the tool wrapper needs of its injector. */
export interface FaultSink {
  strike(hit: FaultHit): Promise<void>;
  remember(key: string, call: SeenCall): void;
}

type Options = ToolExecutionOptions<ToolContext>;
type Execute = (input: unknown, options: Options) => unknown;

/**
 * An effect tool whose hooks strike the injector's points: `in-already-applied` when
 * `alreadyApplied` is asked, `before-effect` and `after-effect` around `execute` (a streaming
 * `execute` streams through, `after-effect` striking after its last value). Its `effectKey`
 * (the tool's own, or the default key when it has none: the same key) remembers each call for the
 * store points. A tool that is not an effect tool comes back as it is.
 */
export function withFaultyEffectCalls<TOOL>(
  toolName: string,
  tool: TOOL,
  options: FaultyToolOptions,
  sink: FaultSink,
): TOOL {
  if (!isEffectTool(tool)) return tool;
  const effect = tool as EffectTool;
  const hit = (point: FaultHit['point'], key: string, ctx: ToolContext, toolInput: unknown): FaultHit => {
    const attempt = currentActivity()?.attempt ?? options.attempt;
    return { point, key, toolName, ctx, toolInput, ...(attempt !== undefined ? { attempt } : {}) };
  };
  const remembered = (key: unknown, input: unknown, ctx: ToolContext): unknown => {
    const attempt = currentActivity()?.attempt ?? options.attempt;
    if (typeof key === 'string')
      sink.remember(key, { toolName, ctx, toolInput: input, ...(attempt !== undefined ? { attempt } : {}) });
    return key;
  };

  const effectKey = (input: unknown, ctx: ToolContext, callOptions: Options): string | PromiseLike<string> => {
    const key = effect.effectKey?.(input, ctx, callOptions) ?? defaultEffectKey(ctx.run.runId, toolName, input);
    return typeof key === 'string'
      ? (remembered(key, input, ctx) as string)
      : Promise.resolve(key).then((resolved) => remembered(resolved, input, ctx) as string);
  };

  const alreadyApplied = async (key: string, input: unknown, ctx: ToolContext): Promise<unknown> => {
    remembered(key, input, ctx);
    await sink.strike(hit('in-already-applied', key, ctx, input));
    return effect.alreadyApplied === undefined ? undefined : await effect.alreadyApplied(key, input, ctx);
  };

  const inner = effect.execute;
  const before = (input: unknown, callOptions: Options) =>
    sink.strike(hit('before-effect', effectKeyOf(callOptions), callOptions.context, input));
  const after = (input: unknown, callOptions: Options) =>
    sink.strike(hit('after-effect', effectKeyOf(callOptions), callOptions.context, input));
  const execute: Execute =
    inner.constructor?.name === 'AsyncGeneratorFunction'
      ? async function* (input, callOptions) {
          await before(input, callOptions);
          yield* inner(input, callOptions) as AsyncIterable<unknown>;
          await after(input, callOptions);
        }
      : async (input, callOptions) => {
          await before(input, callOptions);
          const produced = inner(input, callOptions);
          // An execute that is no generator but returns a stream: its last value is the result.
          let result: unknown;
          if (isAsyncIterable(produced)) for await (const chunk of produced) result = chunk;
          else result = await produced;
          await after(input, callOptions);
          return result;
        };

  // A spread keeps the effect-tool brand (an enumerable symbol property).
  return { ...effect, effectKey, alreadyApplied, execute } as TOOL;
}
