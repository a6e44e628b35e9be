import { proxyActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_TOOL_OPTIONS, toActivityOptions } from '../common/activity-options.js';
import { ACTIVITY_NAMES } from '../common/activity-names.js';
import { recordLater } from './tool-dispatch.js';
import type {
  ChamviActivities,
  EffectCallReport,
  JsonMessage,
  RunRef,
  StoreActivityOptions,
  ToolActivityOptions,
} from '../common/index.js';

/** What {@link effectToolCalls} takes: which registered agent's tools, and the run they belong to. @beta */
export interface EffectToolCallsOptions {
  /** Name of the agent registered on the worker whose effect tools are called (its model is not used). */
  readonly agent: string;
  /** The logical run id (prefix of effect keys). Default: the workflow's `firstExecutionRunId`. */
  readonly runId?: string;
  /** What started the run (`ctx.run.trigger`). */
  readonly trigger?: unknown;
  /** The run's state (`ctx.state`). @defaultValue `{}` */
  readonly state?: Record<string, unknown>;
  /** Named artifacts for the tools (`ctx.artifacts`). @defaultValue `{}` */
  readonly artifacts?: Record<string, unknown>;
  /** Activity options of every call (merged over the library defaults, like a registration's `toolDefaults`). */
  readonly activityOptions?: ToolActivityOptions;
  /** Activity options of the effect-store activity that retries a record the call could not write. */
  readonly storeOptions?: StoreActivityOptions;
}

/** The AI SDK call options the helper reads, when the caller is a tool's `execute`. @beta */
export interface CallOptionsLike {
  /** The AI SDK's tool call id. */
  readonly toolCallId?: string;
  /** The messages of the step that called the tool. */
  readonly messages?: readonly unknown[];
}

/** Effect-tool calls from workflow code, and their report. @beta */
export interface EffectToolCalls {
  /** The run id the effect keys start with. */
  readonly runId: string;
  /**
   * An `execute` for a workflow-side AI SDK tool: it runs the registered effect tool `toolName`
   * in the `chamvi.effectCall` activity (the whole effect protocol, the key computed there by the
   * tool's `effectKey`) and resolves to the tool's result.
   */
  execute(
    toolName: string,
    options?: ToolActivityOptions,
  ): (input: unknown, call?: CallOptionsLike) => Promise<unknown>;
  /** Calls the registered effect tool `toolName` once and resolves to its result. */
  call(toolName: string, input: unknown, call?: CallOptionsLike, options?: ToolActivityOptions): Promise<unknown>;
  /** Every call so far: key, tool, outcome (`recorded` | `reconciled` | `executed`), attempts. */
  readonly effects: readonly EffectCallReport[];
}

/**
 * Calls this library's effect tools from your own workflow code, for example from the tools of an
 * AI SDK loop that runs in the workflow with `@temporalio/ai-sdk`'s provider:
 *
 * ```ts
 * const chamvi = effectToolCalls({ agent: 'toolbox' });
 * const { text } = await generateText({
 *   model: temporalProvider.languageModel('gpt-4o-mini'),
 *   tools: { comment: tool({ inputSchema, execute: chamvi.execute('comment') }) },
 *   stopWhen: stepCountIs(5),
 *   prompt,
 * });
 * return { text, effects: chamvi.effects };
 * ```
 *
 * Each call is one `chamvi.effectCall` activity on the worker where the agent is registered, so
 * the tool gets the same protocol (recorded, claim, `alreadyApplied`, execute, record) and the
 * same report as in an agent workflow. Workflow-safe: no Node, `ai` or `zod` imports.
 * @beta
 */
export function effectToolCalls(options: EffectToolCallsOptions): EffectToolCalls {
  const run: RunRef = {
    agent: options.agent,
    runId: options.runId ?? workflowInfo().firstExecutionRunId,
    ...(options.trigger !== undefined ? { trigger: options.trigger } : {}),
    ...(options.state !== undefined ? { state: options.state } : {}),
    ...(options.artifacts !== undefined ? { artifacts: options.artifacts } : {}),
  };
  const effects: EffectCallReport[] = [];
  const call = async (
    toolName: string,
    input: unknown,
    callOptions?: CallOptionsLike,
    activityOptions?: ToolActivityOptions,
  ): Promise<unknown> => {
    const toolCallId = callOptions?.toolCallId ?? uuid4();
    const summary = `effect ${toolName} · call ${toolCallId}`;
    const activities = proxyActivities<ChamviActivities>({
      ...toActivityOptions(DEFAULT_TOOL_OPTIONS, options.activityOptions, activityOptions),
      summary: summary.length > 200 ? `${summary.slice(0, 197)}...` : summary,
    });
    const result = await activities[ACTIVITY_NAMES.effectCall]({
      ...run,
      toolName,
      toolCallId,
      input,
      messages: (callOptions?.messages ?? []) as JsonMessage[],
      includeResult: true,
    });
    if (result.unrecorded !== undefined) await recordLater(result, options.storeOptions);
    // Unplanned calls (no key, no conversation reference) get the whole report.
    if (result.report?.key !== undefined) effects.push({ ...result.report, toolCallId });
    return result.result;
  };
  return {
    runId: run.runId,
    effects,
    call,
    execute: (toolName, activityOptions) => (input, callOptions) => call(toolName, input, callOptions, activityOptions),
  };
}
