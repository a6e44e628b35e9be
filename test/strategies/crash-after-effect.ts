import type { ToolExecutionOptions } from 'ai';
import {
  defineEffectTool,
  type EffectTool,
  type EffectToolDefinition,
  type IEffectStore,
  type ToolContext,
} from '../../src/index.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';

/** Thrown by {@link crashAfterEffect}: the worker "died" right after the remote effect. */
export class SimulatedCrash extends Error {
  constructor() {
    super('simulated worker crash after the effect, before its result was recorded');
    this.name = 'SimulatedCrash';
  }
}

/**
 * The same effect tool, except that its first `times` executions throw right after the real
 * `execute` applied the remote effect: the crash window between effect and record.
 */
export function crashAfterEffect<I, O>(tool: EffectTool<I, O>, times = 1): EffectTool<I, O> {
  let left = times;
  const execute: EffectTool<I, O>['execute'] = async (input, options) => {
    const result = await (tool.execute(input, options) as Promise<O>);
    if (left-- > 0) throw new SimulatedCrash();
    return result;
  };
  return defineEffectTool<I, O>({ ...tool, execute } as EffectToolDefinition<I, O>);
}

/**
 * One attempt of a tool call the way a worker runs it: a fresh context for `runId`, the tool
 * wrapped with `store`, one call. Returns the result or throws what the call threw.
 */
export async function attempt<I, O>(
  tool: EffectTool<I, O>,
  input: I,
  runId: string,
  store: IEffectStore,
  options: Partial<ToolExecutionOptions<ToolContext>> = {},
): Promise<{ result: O; outcome: string | undefined }> {
  const ctx = createToolContext({ runId, agent: 'test' });
  let outcome: string | undefined;
  const wrapped = wrapToolsForRun({ tool }, ctx, store, undefined, {
    onReport: (r) => (outcome = r.outcome),
    logger: { warn: () => {} },
  });
  const execute = wrapped.tool.execute as (input: I, options: ToolExecutionOptions<ToolContext>) => Promise<O>;
  const result = await execute(input, { toolCallId: 'call-1', messages: [], context: ctx, ...options });
  return { result, outcome };
}

export { MemoryEffectStore };
