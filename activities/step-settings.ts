import {
  NoOutputGeneratedError,
  type LanguageModel,
  type PrepareStepFunction,
  type PrepareStepResult,
  type ToolSet,
} from 'ai';
import { Context } from '@temporalio/activity';
import { TemporalFailure } from '@temporalio/common';
import { ChamviError } from '../src/errors/chamvi-error.js';
import { toFailure } from '../common/to-failure.js';
import type { Agent } from '../src/agent/define-agent.js';
import { PASSED_SETTINGS } from '../src/agent/agent-setting-names.js';
import { UnsupportedAgentSettingError } from '../src/errors/unsupported-agent-setting-error.js';
import type { JsonMessage, ModelStepInput } from '../common/index.js';
import { stopConditionMet } from './stop-conditions.js';
import { stepHistory } from './step-history.js';

/** Settings of the agent the model step does not hand the model call: the step handles them itself. */
// toolApproval: the workflow asks for approvals (the registration carries it, see agent-tool-approval.ts).
const HANDLED_BY_THE_STEP = new Set<string>(['maxRetries', 'toolApproval']);

/** What one model step applies of its agent's settings. */
export interface StepSettings {
  /** A stop condition is met: the run ends here, without a model call. */
  readonly stop: boolean;
  /**
   * Spread into the step's `generateText` (or `streamText`) call: model, instructions, telemetry,
   * the agent's passed settings (toolChoice, activeTools, output, providerOptions, temperature,
   * ...), and its `prepareStep`, called with the run's steps so far (the AI SDK then applies and
   * merges what it returns, exactly as in its own loop).
   */
  readonly call: { readonly model: LanguageModel; readonly prepareStep?: PrepareStepFunction<ToolSet> } & Readonly<
    Record<string, unknown>
  >;
  /** The model the call used: the agent's, or the one `prepareStep` returned. */
  model(): LanguageModel;
  /**
   * The step's parsed structured output, as JSON, when the agent has an `output` and this step is
   * a final answer (as `generateText` decides: finish reason `stop`, or text and no tool calls).
   * `result.output` is read only then: `generateText`'s is a getter, `streamText`'s a promise, and
   * `streamText` would try to parse a tool-call step's empty text.
   */
  output(result: {
    readonly text: string;
    readonly finishReason: string;
    readonly output: unknown;
  }): Promise<{ readonly output?: unknown }>;
}

/**
 * Resolves the agent's settings for one model step. Stop conditions (`stopWhen`) are checked first,
 * for every step after the first, on the run's steps so far as the conversation holds them, with
 * the last step's tool results: as the AI SDK checks them after a step's tools ran. `prepareStep`
 * is called inside the model call with the same steps and the run's step number.
 */
export async function resolveStepSettings(
  agent: Agent,
  input: Pick<ModelStepInput, 'step'>,
  messages: readonly JsonMessage[],
): Promise<StepSettings> {
  const settings = (agent.settings ?? {}) as Readonly<Record<string, unknown>>;
  let history: ReturnType<typeof stepHistory> | undefined;
  const historyOf = () =>
    (history ??= stepHistory(messages, input.step, {
      onUsageRead: usageNotKept(agent.name),
      runtimeContext: agent.settings?.runtimeContext ?? {},
    }));
  const stopped =
    input.step > 0 &&
    (await stopConditionMet(agent.settings?.stopWhen, historyOf().steps).catch((error: unknown) => {
      throw settingFailure(agent.name, input.step, 'stopWhen', error);
    }));
  if (stopped) {
    return { stop: true, call: { model: agent.model }, model: () => agent.model, output: () => Promise.resolve({}) };
  }
  let used: LanguageModel = agent.model;
  const passed: Record<string, unknown> = {};
  for (const key of PASSED_SETTINGS) {
    if (settings[key] !== undefined && !HANDLED_BY_THE_STEP.has(key)) passed[key] = settings[key];
  }
  const userPrepareStep = agent.settings?.prepareStep;
  const prepareStep: PrepareStepFunction<ToolSet> | undefined =
    userPrepareStep === undefined
      ? undefined
      : async (options) => {
          const run = historyOf();
          // The SDK sees a one-step call; the user's function sees the run (its steps and step number).
          let result: PrepareStepResult<ToolSet>;
          try {
            result = await userPrepareStep({
              ...options,
              steps: run.steps,
              stepNumber: input.step,
              initialMessages: run.initialMessages,
              responseMessages: run.responseMessages as typeof options.responseMessages,
            });
          } catch (error) {
            // Thrown at once or rejected: the same failure, saying where it came from.
            throw settingFailure(agent.name, input.step, 'prepareStep', error);
          }
          checkPrepared(agent.name, result);
          if (result?.model !== undefined) used = result.model;
          return result;
        };
  return {
    stop: false,
    call: {
      model: agent.model,
      ...(agent.instructions !== undefined ? { instructions: agent.instructions } : {}),
      ...(agent.telemetry !== undefined ? { telemetry: agent.telemetry } : {}),
      ...passed,
      ...(prepareStep !== undefined ? { prepareStep } : {}),
    },
    model: () => used,
    output: async (result) => {
      if (settings['output'] === undefined) return {};
      const final = result.finishReason === 'stop' || (result.finishReason !== 'tool-calls' && result.text.length > 0);
      if (!final) return {};
      try {
        const output = await result.output;
        // Part of the workflow's result: JSON only (a Date becomes its ISO string, as Temporal would).
        return output === undefined ? {} : { output: JSON.parse(JSON.stringify(output)) as unknown };
      } catch (error) {
        // No output generated (the AI SDK's word for a step it did not parse): none in the result.
        if (NoOutputGeneratedError.isInstance(error)) return {};
        throw error;
      }
    },
  };
}

/**
 * What the model step throws when the agent's `stopWhen` or `prepareStep` throws: the same failure,
 * retried as it would be (its type is the error's name, so a retry policy's `nonRetryableErrorTypes`
 * and the failure catalogue still apply), with a message that says which setting of which agent
 * threw at which step, the error as its cause. The library's own errors and Temporal's failures
 * (a cancellation) pass as they are.
 */
function settingFailure(agent: string, step: number, setting: 'stopWhen' | 'prepareStep', error: unknown): unknown {
  if (!(error instanceof Error) || ChamviError.isInstance(error) || error instanceof TemporalFailure) return error;
  if (error.name === 'AbortError') return error;
  return toFailure(error, {
    message: `Agent "${agent}": its ${setting} threw before the model call of step ${step + 1}: ${error.message} (it runs again when the model step is retried).`,
    cause: error,
  });
}

/** What a `prepareStep` result may not ask of a model step; the same function returns it again on a retry. */
function checkPrepared(agent: string, result: PrepareStepResult<ToolSet>): void {
  if (result === undefined || result === null) return;
  const why: Record<string, string> = {
    toolsContext: "every tool gets the run's ToolContext; pass per-run data as the run's state.",
    experimental_sandbox: "the workflow runs the step's tool calls in their own activities, outside this step.",
  };
  for (const [field, reason] of Object.entries(why)) {
    if ((result as Record<string, unknown>)[field] !== undefined) {
      throw new UnsupportedAgentSettingError({
        setting: `prepareStep.${field}`,
        message: `Agent "${agent}": prepareStep returned ${field}, which a model step cannot apply: ${reason}`,
      });
    }
  }
}

/** Warns (once per model step) that the steps' usage is not kept: a condition on token counts sees `undefined`. */
function usageNotKept(agent: string): () => void {
  let warned = false;
  return () => {
    if (warned) return;
    warned = true;
    const message = `Agent "${agent}": a stop condition or prepareStep read a step's usage, which a durable run does not keep (its token counts are undefined); count tokens with telemetry instead.`;
    try {
      Context.current().log.warn(message);
    } catch {
      // Outside an activity (a unit test): nothing to log to.
    }
  };
}
