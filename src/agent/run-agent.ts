import { randomUUID } from 'node:crypto';
import {
  generateText,
  isStepCount,
  NoOutputGeneratedError,
  type ModelMessage,
  type StepResult,
  type ToolSet,
} from 'ai';
import { createToolContext, type RunData, type ToolContext } from '../context/tool-context.js';
import type { EffectCallReport, EffectLogger } from '../effects/effect-report.js';
import { InvalidEffectKeyError, LegacyContextFieldError } from '../errors/errors.js';
import type { IEffectStore } from '../stores/effect-store.js';
import type { Agent } from './define-agent.js';
import { toolsContextFor } from './tools-context.js';
import { wrapToolsForRun } from './wrap-tools-for-run.js';

/** The prompt of a run: a text prompt or a message list. @public */
export type AgentPrompt =
  | { readonly prompt: string; readonly messages?: never }
  | { readonly messages: ModelMessage[]; readonly prompt?: never };

/** What {@link runAgent} takes besides the agent. @public */
export type RunAgentOptions = AgentPrompt & {
  /** Where effect results are recorded. Reuse it (with the same `runId`) to resume a run without re-applying effects. */
  readonly store: IEffectStore;
  /** The logical run's id; effect keys start with it. Default: a new UUID (a new run). */
  readonly runId?: string;
  readonly trigger?: unknown;
  readonly state?: RunData;
  readonly artifacts?: RunData;
  /** Overrides the agent's `maxSteps`. */
  readonly maxSteps?: number;
  /** Re-checks every tool call; a refused call throws `ToolNotAllowedError`. */
  readonly allow?: (toolName: string) => boolean;
  /** Aborts the run (and reaches tools as `ctx.run.signal`). */
  readonly signal?: AbortSignal;
  readonly logger?: EffectLogger;
};

/** What a run resolves with. @public */
export interface AgentRunResult {
  /** The run id, the prefix of its effect keys. */
  readonly runId: string;
  /** The model's final text. */
  readonly text: string;
  /** The final step's parsed structured output, for an agent with `output` (absent when the last step called tools). */
  readonly output?: unknown;
  /** The AI SDK's step results. */
  readonly steps: ReadonlyArray<StepResult<ToolSet>>;
  /**
   * Every effect call in call order: key, tool and outcome (`recorded` | `reconciled` | `executed`),
   * with those of its sub-agents (agent tools) as each sub-agent run ends.
   */
  readonly effects: EffectCallReport[];
}

/**
 * Runs an agent in this process: the AI SDK tool loop (`generateText`) with the agent's effect
 * tools wrapped for the run, so each effect call runs the effect protocol against `store`.
 *
 * Running the same agent again with the same `runId` and store applies each effect once: calls
 * whose keys are recorded return their recorded results. This engine has no retries of its own;
 * for durable runs use the Temporal workflow.
 *
 * Tool errors go back to the model as the AI SDK does, except definition bugs (a legacy
 * `ctx.runId` read, an `effectKey` returning no usable key): those end the loop and reject the run.
 * @public
 */
export async function runAgent(agent: Agent, options: RunAgentOptions): Promise<AgentRunResult> {
  const runId = options.runId ?? randomUUID();
  const ctx: ToolContext = createToolContext({
    runId,
    agent: agent.name,
    trigger: options.trigger,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.state ? { state: options.state } : {}),
    ...(options.artifacts ? { artifacts: options.artifacts } : {}),
  });
  const effects: EffectCallReport[] = [];
  const tools = wrapToolsForRun(agent.tools, ctx, options.store, options.allow, {
    onReport: (report) => effects.push(report),
    ...(options.logger ? { logger: options.logger } : {}),
    // A sub-agent runs here, on the same store, and its effect calls join this run's list.
    runSubAgent: async (sub, { prompt, runId: subRunId }) => {
      const result = await runAgent(sub, {
        prompt,
        runId: subRunId,
        store: options.store,
        trigger: { parent: { runId, agent: agent.name } },
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.allow ? { allow: options.allow } : {}),
      });
      effects.push(...result.effects);
      return result.text;
    },
  });
  const prompt = options.messages !== undefined ? { messages: options.messages } : { prompt: options.prompt ?? '' };
  // The agent's ToolLoopAgent settings go to the AI SDK's own loop as they are (checked by defineAgent).
  const { stopWhen, ...settings } = agent.settings ?? {};
  const result = await generateText({
    ...settings,
    model: agent.model,
    ...(agent.instructions !== undefined ? { instructions: agent.instructions } : {}),
    tools,
    toolsContext: toolsContextFor(tools, ctx),
    ...prompt,
    // A step whose tool hit a definition bug ends the loop: the model cannot fix the tool.
    stopWhen: [
      isStepCount(options.maxSteps ?? agent.maxSteps),
      ...(stopWhen === undefined ? [] : Array.isArray(stopWhen) ? stopWhen : [stopWhen]),
      ({ steps }: { steps: ReadonlyArray<StepResult<ToolSet>> }) => definitionBug(steps.slice(-1)) !== undefined,
    ],
    ...(options.signal ? { abortSignal: options.signal } : {}),
    ...(agent.telemetry !== undefined ? { telemetry: agent.telemetry } : {}),
  });
  const bug = definitionBug(result.steps);
  if (bug !== undefined) throw bug;
  const output = settings.output === undefined ? undefined : parsedOutput(() => result.output);
  return { runId, text: result.text, ...(output !== undefined ? { output } : {}), steps: result.steps, effects };
}

/** The result's structured output; `undefined` when the last step made none (it called tools). */
function parsedOutput(read: () => unknown): unknown {
  try {
    return read();
  } catch (error) {
    if (NoOutputGeneratedError.isInstance(error)) return undefined;
    throw error;
  }
}

/**
 * The first tool error in `steps` that is a bug in a tool's definition rather than something the
 * model could react to: a legacy context field read (`ctx.runId`), or an `effectKey` that returned
 * no usable key. The AI SDK would hand such errors to the model as tool errors and carry on; the run
 * fails with them instead, loudly. Other tool errors (a failing remote, `ToolNotAllowedError`) go
 * back to the model as the AI SDK does.
 */
function definitionBug(steps: ReadonlyArray<StepResult<ToolSet>>): Error | undefined {
  for (const step of steps) {
    for (const part of step.content) {
      if (part.type !== 'tool-error') continue;
      if (LegacyContextFieldError.isInstance(part.error) || InvalidEffectKeyError.isInstance(part.error)) {
        return part.error;
      }
    }
  }
  return undefined;
}
