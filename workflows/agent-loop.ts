import { proxyActivities, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_MODEL_STEP_OPTIONS, toActivityOptions } from '../common/activity-options.js';
import { toFailure } from '../common/to-failure.js';
import { InvalidAgentInputError } from '../src/errors/errors.js';
import { ACTIVITY_NAMES } from '../common/activity-names.js';
import { ApprovalGate } from './approvals.js';
import { agentProgressQuery, type AgentProgress } from '../common/agent-progress.js';
import { ConversationState } from './conversation-state.js';
import { dispatchToolCalls } from './tool-dispatch.js';
import type {
  ApprovalRecord,
  ChamviActivities,
  RunEffectReport,
  ConversationRef,
  JsonMessage,
  RunRef,
  ModelStepActivityOptions,
  StoreActivityOptions,
} from '../common/index.js';

/** One model step of a run, as the run's result lists it. */
export interface StepSummary {
  readonly step: number;
  readonly text: string;
  readonly finishReason: string;
  readonly toolCalls: ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string }>;
}

/** Where a run stands between steps: enough to resume it (continue-as-new carries it). */
export interface AgentCheckpoint {
  readonly runId: string;
  /** Steps done so far. */
  readonly step: number;
  /** The conversation by reference: the key of its last stored entry, and the messages not stored yet. */
  readonly conversation?: ConversationRef;
  /** The whole conversation: in checkpoints of runs begun before 0.3 (a run resumed from one stores it first). */
  readonly messages?: JsonMessage[];
  readonly steps: StepSummary[];
  readonly effects: RunEffectReport[];
  /** Approval decisions so far (absent in checkpoints of older versions). */
  readonly approvals?: ApprovalRecord[];
}

/** What {@link runAgentLoop} takes. Exactly one of `prompt`, `messages` or `checkpoint` starts the conversation. */
export interface AgentLoopOptions {
  /** Name of an agent registered on the worker. */
  readonly agent: string;
  readonly prompt?: string;
  readonly messages?: JsonMessage[];
  readonly trigger?: unknown;
  readonly state?: Record<string, unknown>;
  readonly artifacts?: Record<string, unknown>;
  /** Step limit; default the agent's `maxSteps` (20 unless the agent says otherwise). */
  readonly maxSteps?: number;
  /**
   * The logical run id (`ctx.run.runId`, the prefix of effect keys). Default: the workflow's
   * `firstExecutionRunId`, which Temporal keeps across workflow retries, continue-as-new and
   * reset, and which a new start of the same workflow id replaces.
   */
  readonly runId?: string;
  /** Activity options for the model step and the effect-store activity (tools take theirs from the worker). */
  readonly activityOptions?: {
    readonly modelStep?: ModelStepActivityOptions;
    readonly store?: StoreActivityOptions;
  };
  /** Resume here instead of starting (from continue-as-new). */
  readonly checkpoint?: AgentCheckpoint;
  /**
   * Called before every model step but the first, with the run's checkpoint. Workflow code: it may
   * sleep, wait for a signal, or `continueAsNew` with the checkpoint.
   */
  readonly beforeStep?: (checkpoint: AgentCheckpoint) => Promise<void> | void;
}

/** What a run returns. */
export interface AgentRunOutput {
  readonly runId: string;
  /** The model's final text. */
  readonly text: string;
  /**
   * The final step's parsed structured output, for an agent with `output` (`Output.object(...)`,
   * ...), as JSON; absent when the run ended on a step that called tools (a stop condition, the
   * step limit), as the AI SDK has no output then.
   */
  readonly output?: unknown;
  readonly steps: StepSummary[];
  /**
   * Every effect call: key, tool, outcome (`executed` | `reconciled` | `recorded`, or `failed` with
   * its last error, or `denied` with the reason), attempts.
   */
  readonly effects: RunEffectReport[];
  /** Every approval decision: approved or denied, by whom (approver, timeout, policy), why. */
  readonly approvals: ApprovalRecord[];
  /**
   * The run's conversation by reference: the key of its last entry in the workers' store, and the
   * tool results no model step saw (a run stopped by its step limit). Read it with
   * `loadConversation(store, output)` or `chamvi show <workflow id>`.
   */
  readonly conversation?: ConversationRef;
}

/**
 * Runs an agent's tool loop inside workflow code: one model-step activity per step, then one
 * activity per tool call (identical effect calls share one), until the model stops calling tools
 * or the step limit is reached. Deterministic and workflow-safe: call it from your own workflows
 * (signals, timers and child workflows keep working around it). Registers the progress query.
 *
 * The conversation does not travel through the event history: each model step stores it in the
 * workers' store as content-addressed entries, and the workflow carries only the key of the last
 * one and the messages not stored yet (the step's tool results), so a step adds the same few bytes
 * to the history however long the run is. Runs begun before 0.3 finish the way they began (see
 * `ConversationState`).
 */
export async function runAgentLoop(options: AgentLoopOptions): Promise<AgentRunOutput> {
  const start = startingPoint(options);
  const run: RunRef = {
    agent: options.agent,
    runId: start.runId,
    ...(options.trigger !== undefined ? { trigger: options.trigger } : {}),
    ...(options.state !== undefined ? { state: options.state } : {}),
    ...(options.artifacts !== undefined ? { artifacts: options.artifacts } : {}),
  };
  // By reference; a run begun before 0.3 is told by its first model step's answer and finishes whole, as it began.
  const conversation = new ConversationState(start);
  const steps = [...start.steps];
  const effects = [...start.effects];
  const approvals = [...(start.approvals ?? [])];
  const gate = new ApprovalGate(run, options.activityOptions?.store);
  const progress = { runId: run.runId, agent: run.agent, step: start.step, status: 'running' } as {
    -readonly [K in keyof AgentProgress]: AgentProgress[K];
  };
  setHandler(agentProgressQuery, () => ({
    ...progress,
    effects: [...effects],
    approvals: [...approvals],
    ...(conversation.inlined ? {} : conversation.snapshot()),
  }));

  const modelStepOptions = toActivityOptions(DEFAULT_MODEL_STEP_OPTIONS, options.activityOptions?.modelStep);
  const legacyModelStep = proxyActivities<ChamviActivities>({
    ...modelStepOptions,
    summary: `model step · agent ${run.agent}`,
  })[ACTIVITY_NAMES.modelStep];

  let text: string | undefined;
  // The last step's structured output (agents with `output`), as the AI SDK's result has it.
  let output: unknown;
  for (let step = start.step; ; step++) {
    if (step > start.step || options.checkpoint !== undefined) {
      await options.beforeStep?.({ runId: run.runId, step, ...conversation.snapshot(), steps, effects, approvals });
    }
    progress.step = step;
    // The UI names the step in each activity's summary (runs begun before 0.3 keep theirs).
    const modelStep = conversation.inlined
      ? legacyModelStep
      : proxyActivities<ChamviActivities>({
          ...modelStepOptions,
          summary: `step ${step} · model · agent ${run.agent}`.slice(0, 200),
        })[ACTIVITY_NAMES.modelStep];
    // The store learns here that the execution this one continues holds the conversation no more.
    const continuedFrom = step === start.step ? workflowInfo().continuedFromExecutionRunId : undefined;
    const result = await modelStep({
      ...run,
      step,
      ...conversation.modelStepInput(),
      ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
      ...(continuedFrom !== undefined ? { continuedFrom } : {}),
      // The run stream's key; only when the run id does not say it already (no bytes added to a default run's history).
      ...(run.runId !== workflowInfo().firstExecutionRunId
        ? { firstExecutionRunId: workflowInfo().firstExecutionRunId }
        : {}),
    });
    // The agent's stopWhen (evaluated in the model step, on the steps so far) ended the run before this step.
    if (result.stopped === true) break;
    output = result.output;
    // What the model saw for this step: the tool calls' `options.messages` (AI SDK semantics, and
    // what the model step computed the effect keys from), without the assistant response.
    const seen = conversation.answered(result);
    text = result.text;
    const dispatched = await dispatchToolCalls(run, seen, result.toolCalls, options.activityOptions?.store, {
      gate,
      step,
    });
    for (const call of dispatched) {
      if (call.report !== undefined) effects.push(call.report);
      if (call.approval !== undefined) approvals.push(call.approval);
    }
    const answers = [
      ...dispatched,
      ...(result.refusedCalls ?? []).map((c) => ({ ...c, output: { type: 'error-text', value: c.message } as const })),
    ];
    if (answers.length > 0) conversation.addToolResults(answers);
    steps.push({
      step,
      text: result.text,
      finishReason: result.finishReason,
      toolCalls: [...result.toolCalls, ...(result.refusedCalls ?? [])].map(({ toolCallId, toolName }) => ({
        toolCallId,
        toolName,
      })),
    });
    setCurrentDetails(describeEffects(run.runId, effects));
    const maxSteps = options.maxSteps ?? result.agentMaxSteps ?? Infinity;
    // Invalid calls were answered by the model step itself (a tool message with their errors).
    const answered = answers.length > 0 || conversation.endsWithToolMessage();
    if (!answered || steps.length >= maxSteps) break;
  }
  progress.status = 'completed';
  return {
    runId: run.runId,
    text: text ?? '',
    ...(output !== undefined ? { output } : {}),
    steps,
    effects,
    approvals,
    ...conversation.snapshot(),
  };
}

function startingPoint(options: AgentLoopOptions): AgentCheckpoint {
  if (options.checkpoint !== undefined) return options.checkpoint;
  const given = [options.prompt !== undefined, options.messages !== undefined].filter(Boolean).length;
  if (given !== 1) {
    throw toFailure(
      new InvalidAgentInputError(
        `Agent run of "${options.agent}" needs exactly one of prompt or messages (got ${given === 0 ? 'neither' : 'both'}).`,
      ),
    );
  }
  const messages: JsonMessage[] =
    options.messages !== undefined ? [...options.messages] : [{ role: 'user', content: options.prompt ?? '' }];
  return {
    runId: options.runId ?? workflowInfo().firstExecutionRunId,
    step: 0,
    messages,
    steps: [],
    effects: [],
    approvals: [],
  };
}

function describeEffects(runId: string, effects: RunEffectReport[]): string {
  const lines = effects.map((e) => `- ${e.toolName} · ${e.outcome} · attempts ${e.attempts} · \`${e.key}\``);
  return [`**run** \`${runId}\` · ${effects.length} effect call(s)`, ...lines.slice(-20)].join('\n');
}
