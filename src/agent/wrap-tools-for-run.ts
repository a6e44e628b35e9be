import type { Tool, ToolExecutionOptions, ToolSet } from 'ai';
import { guardToolContext, type ToolContext } from '../context/tool-context.js';
import { assertNoStrayHooks, EFFECT_TOOL, isEffectTool, type EffectTool } from '../effects/define-effect-tool.js';
import type { EffectCallReport, EffectLogger } from '../effects/effect-report.js';
import { applyEffect, type EffectEnv } from '../effects/effect-protocol.js';
import { ToolNotAllowedError } from '../errors/errors.js';
import { stepIndex } from '../effects/step-index.js';
import { agentToolOf, agentToolPrompt, childCallId, type AgentToolSpec } from './agent-tool.js';
import type { Agent } from './define-agent.js';
import type { IEffectStore } from '../stores/effect-store.js';

/** Re-checks every call: `false` refuses it with a {@link ToolNotAllowedError}. */
export type AllowTool = (toolName: string) => boolean;

/** Extra settings of {@link wrapToolsForRun}. */
export interface WrapOptions extends Omit<EffectEnv, 'store'> {
  /** Told about every effect call once it has an outcome. */
  readonly onReport?: (report: EffectCallReport) => void;
  readonly logger?: EffectLogger;
  /**
   * Runs an agent tool's sub-agent to its end and answers its final text (`runAgent` sets it).
   * Without it agent tools pass through as they are, and their `execute` throws.
   */
  readonly runSubAgent?: (agent: Agent, run: { readonly prompt: string; readonly runId: string }) => Promise<string>;
}

type AnyTool = Tool<unknown, unknown, ToolContext>;
type Execute = NonNullable<AnyTool['execute']>;
type Options = ToolExecutionOptions<ToolContext>;

/**
 * Applies the engine's wrapping to a tool set outside the engine (a test, a custom loop).
 *
 * Effect tools come back wrapped: every call runs the effect protocol against `store` with `ctx`
 * (recorded result, else `alreadyApplied`, else `execute` and record). Other tools come back as the
 * very same objects, unless `allow` is given: then every call of every tool first asks
 * `allow(toolName)`, and a refused call throws {@link ToolNotAllowedError} before touching the
 * store or the remote. Wrapped tools keep their definition (`description`, `inputSchema`,
 * `contextSchema`, ...) and forward the call options to `execute`; the hooks and `execute` (as
 * `options.context`) always get `ctx`, so pass the same ToolContext as `context` when you call them.
 *
 * `ctx` may be a plain object (`{ run: { runId, ... }, state, artifacts }`): the hooks then get a
 * guarded view of it, where reading a legacy field (`ctx.runId`) throws `LegacyContextFieldError`
 * instead of reading `undefined` (see `guardToolContext`); `ctx.run.runId` must be a non-empty
 * string, else `InvalidToolContextError` is thrown here. A streaming `execute` (an async
 * generator function) still streams through the wrapper; its last value is recorded, and a
 * recorded result replays as that single value.
 *
 * A wrapped effect tool is an ordinary tool (no brand, no hooks), so wrapping it again passes it
 * through. A tool with `effectKey`/`alreadyApplied` but no effect brand throws
 * `InvalidEffectToolError` rather than run unprotected.
 */
export function wrapToolsForRun<TOOLS extends ToolSet>(
  tools: TOOLS,
  ctx: ToolContext,
  store: IEffectStore,
  allow?: AllowTool,
  options: WrapOptions = {},
): TOOLS {
  const runCtx = guardToolContext(ctx, 'wrapToolsForRun');
  const wrapped: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    assertNoStrayHooks(name, tool, 'wrapToolsForRun');
    const sub = agentToolOf(tool);
    if (sub !== undefined && options.runSubAgent !== undefined)
      wrapped[name] = wrapAgentTool(name, tool as AnyTool, sub, runCtx, options.runSubAgent, allow);
    else if (isEffectTool(tool)) wrapped[name] = wrapEffectTool(name, tool, runCtx, { ...options, store }, allow);
    else if (allow !== undefined && typeof tool.execute === 'function')
      wrapped[name] = guardTool(name, tool as AnyTool, allow);
    else wrapped[name] = tool;
  }
  return wrapped as TOOLS;
}

function checkAllowed(name: string, allow: AllowTool | undefined): void {
  if (allow !== undefined && !allow(name)) throw new ToolNotAllowedError(name);
}

function guardTool(name: string, tool: AnyTool, allow: AllowTool): AnyTool {
  const execute = tool.execute as Execute;
  const guarded: Execute = isAsyncGeneratorFunction(execute)
    ? async function* (input, opts) {
        checkAllowed(name, allow);
        yield* execute(input, opts) as AsyncIterable<unknown>;
      }
    : (input, opts) => {
        checkAllowed(name, allow);
        return execute(input, opts);
      };
  return { ...tool, execute: guarded };
}

/** An agent tool whose calls run its sub-agent with the run id a worker would derive for them. */
function wrapAgentTool(
  name: string,
  tool: AnyTool,
  sub: AgentToolSpec,
  ctx: ToolContext,
  runSubAgent: NonNullable<WrapOptions['runSubAgent']>,
  allow: AllowTool | undefined,
): AnyTool {
  const execute: Execute = async (input, options) => {
    checkAllowed(name, allow);
    const prompt = agentToolPrompt(name, sub, input);
    return runSubAgent(sub.agent, {
      prompt,
      runId: `${ctx.run.runId}:${childCallId(name, stepIndex(options), input)}`,
    });
  };
  return { ...tool, execute };
}

function wrapEffectTool(
  name: string,
  tool: EffectTool,
  ctx: ToolContext,
  env: EffectEnv & WrapOptions,
  allow: AllowTool | undefined,
): AnyTool {
  const call = (input: unknown, options: Options) => ({
    tool,
    toolName: name,
    input,
    ctx,
    options: withContext(options, ctx),
  });
  const execute: Execute = isAsyncGeneratorFunction(tool.execute)
    ? async function* (input, options) {
        checkAllowed(name, allow);
        yield* streamEffect(call(input, options), env);
      }
    : async (input, options) => {
        checkAllowed(name, allow);
        const resolved = await applyEffect(call(input, options), env);
        env.onReport?.(resolved.report);
        return resolved.result;
      };
  // The brand and the hooks stay behind: they belong to the protocol this execute already runs.
  const {
    [EFFECT_TOOL]: _brand,
    effectKey: _key,
    alreadyApplied: _applied,
    ...definition
  } = tool as EffectTool & {
    [EFFECT_TOOL]?: unknown;
  };
  return { ...definition, execute };
}

/** Streams an effect call: each value `execute` yields passes through; a recorded result is yielded once. */
async function* streamEffect(
  call: Parameters<typeof applyEffect>[0],
  env: EffectEnv & WrapOptions,
): AsyncGenerator<unknown> {
  const queue: unknown[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  let yielded = false;
  const done = applyEffect(call, env, (chunk) => {
    queue.push(chunk);
    wake?.();
  }).finally(() => {
    finished = true;
    wake?.();
  });
  done.catch(() => undefined);
  while (true) {
    while (queue.length > 0) {
      yielded = true;
      yield queue.shift();
    }
    if (finished) break;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  const resolved = await done;
  env.onReport?.(resolved.report);
  if (!yielded) yield resolved.result;
}

/**
 * The call options the hooks get: the caller's, with the run's guarded context as `context` (the
 * caller's may be the unguarded object, or the AI SDK's copy validated against `contextSchema`).
 */
function withContext(options: Options | undefined, ctx: ToolContext): Options {
  if (options === undefined) return { toolCallId: 'direct-call', messages: [], context: ctx };
  return options.context === ctx ? options : { ...options, context: ctx };
}

function isAsyncGeneratorFunction(fn: unknown): boolean {
  return typeof fn === 'function' && fn.constructor?.name === 'AsyncGeneratorFunction';
}
