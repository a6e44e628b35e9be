import {
  CancellationScope,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  TemporalFailure,
  workflowInfo,
} from '@temporalio/workflow';
import { DEFAULT_MODEL_STEP_OPTIONS, toActivityOptions } from '../common/activity-options.js';
import { toFailure } from '../common/to-failure.js';
import { InvalidAgentInputError, RollbackIncompleteError } from '../src/errors/errors.js';
import { ACTIVITY_NAMES } from '../common/activity-names.js';
import { ApprovalGate } from './approvals.js';
import {
  agentProgressQuery,
  appliedEffectsQuery,
  type AgentProgress,
  type SettledToolCall,
} from '../common/agent-progress.js';
import { compensateApplied, markCompensated } from './compensations.js';
import { ConversationState, conversationInHistory } from './conversation-state.js';
import { dispatchToolCalls, type DispatchedCall } from './tool-dispatch.js';
import { RunTracer } from './run-tracer.js';
import { BudgetKeeper, checkBudget, countStep, RemoteBudget, type StepAdmission } from './run-budget.js';
import { addUsage, NO_USAGE } from '../common/run-usage.js';
import type {
  AppliedEffect,
  ApprovalRecord,
  BudgetExhaustion,
  BudgetLink,
  BudgetState,
  ChamviActivities,
  ChildRunReport,
  CompensateOn,
  RunEffectReport,
  ConversationRef,
  JsonMessage,
  RunBudget,
  RunRef,
  RunTrace,
  RunUsage,
  ModelStepActivityOptions,
  StoreActivityOptions,
  ToolActivityOptions,
  ToolCallPlan,
} from '../common/index.js';

/** One model step of a run, as the run's result lists it. @public */
export interface StepSummary {
  /** The step, 0-based. */
  readonly step: number;
  /** The step's text. */
  readonly text: string;
  /** Why the model ended the step, as the AI SDK says (`stop`, `tool-calls`, ...). */
  readonly finishReason: string;
  /** The tool calls the step made. */
  readonly toolCalls: ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string }>;
}

/** Where a run stands between steps: enough to resume it (continue-as-new carries it). @public */
export interface AgentCheckpoint {
  /** The run id (`ctx.run.runId`). */
  readonly runId: string;
  /** Steps done so far. */
  readonly step: number;
  /** The conversation by reference: the key of its last stored entry, and the messages not stored yet. */
  readonly conversation: ConversationRef;
  /** The steps done so far. */
  readonly steps: StepSummary[];
  /** The effect calls so far. */
  readonly effects: RunEffectReport[];
  /** Approval decisions so far (absent: none). */
  readonly approvals?: ApprovalRecord[];
  /** The run's trace so far (absent: the run is not traced; see `RunTracer`). */
  readonly trace?: RunTrace;
  /** The applied effect calls so far, with their inputs, for their compensation (absent: none). @beta */
  readonly applied?: AppliedEffect[];
  /** The sub-agent runs that ended so far (absent: none). @beta */
  readonly children?: ChildRunReport[];
  /** The run's own model steps' usage so far, without its sub-agent runs' (absent: none yet). @beta */
  readonly usage?: RunUsage;
  /** What approvals added to the run's budget, and how often it asked (absent: no budget). @beta */
  readonly budget?: BudgetState;
}

/** What {@link runAgentLoop} takes. Exactly one of `prompt`, `messages` or `checkpoint` starts the conversation. @public */
export interface AgentLoopOptions {
  /** Name of an agent registered on the worker. */
  readonly agent: string;
  /** The user prompt that starts the conversation. */
  readonly prompt?: string;
  /** The messages that start the conversation (an earlier run's, say), as JSON. */
  readonly messages?: JsonMessage[];
  /** What started the run (`ctx.run.trigger`). */
  readonly trigger?: unknown;
  /** The run's state (`ctx.state`). @defaultValue `{}` */
  readonly state?: Record<string, unknown>;
  /** Named artifacts for the tools (`ctx.artifacts`). @defaultValue `{}` */
  readonly artifacts?: Record<string, unknown>;
  /** Step limit; default the agent's `maxSteps` (20 unless the agent says otherwise). */
  readonly maxSteps?: number;
  /**
   * The logical run id (`ctx.run.runId`, the prefix of effect keys). Default: the workflow's
   * `firstExecutionRunId`, which Temporal keeps across workflow retries, continue-as-new and
   * reset, and which a new start of the same workflow id replaces.
   */
  readonly runId?: string;
  /**
   * Activity options for the model step, the effect-store activity and the compensations (tools
   * take theirs from the worker).
   */
  readonly activityOptions?: {
    readonly modelStep?: ModelStepActivityOptions;
    readonly store?: StoreActivityOptions;
    /** Each `chamvi.compensate` activity, over the tool defaults (10 attempts, 1 s doubling to 1 min). @beta */
    readonly compensate?: ToolActivityOptions;
  };
  /**
   * When the run undoes its applied effects itself (each effect tool's `compensate`, in reverse
   * order of application, in a non-cancellable scope): `'failure'` when the run fails, `'cancel'`
   * when it is cancelled. Default: never (`[]`); `rollbackRun` undoes a finished run's effects on
   * demand. A compensation that keeps failing is reported on its call and the run fails with
   * `RollbackIncompleteError`. Absent: the agent's `compensateOn`, if its definition sets one.
   * @beta
   */
  readonly compensateOn?: CompensateOn;
  /**
   * A budget for the run and its sub-agent runs, at every level: tokens, cost or steps, checked
   * before each model step of the tree (see {@link RunBudget}). Absent: none.
   * @beta
   */
  readonly budget?: RunBudget;
  /**
   * The top run whose budget this run's steps count against: set by a run with a budget for its
   * sub-agent runs, not by callers (a run with `budget` passes it on).
   * @beta
   */
  readonly budgetFrom?: BudgetLink;
  /** Resume here instead of starting (from continue-as-new). */
  readonly checkpoint?: AgentCheckpoint;
  /**
   * Called before every model step but the first, with the run's checkpoint. Workflow code: it may
   * sleep, wait for a signal, or `continueAsNew` with the checkpoint.
   */
  readonly beforeStep?: (checkpoint: AgentCheckpoint) => Promise<void> | void;
}

/** What a run returns. @public */
export interface AgentRunOutput {
  /** The run id (`ctx.run.runId`, the prefix of its effect keys). */
  readonly runId: string;
  /** The model's final text. */
  readonly text: string;
  /**
   * The final step's parsed structured output, for an agent with `output` (`Output.object(...)`,
   * ...), as JSON; absent when the run ended on a step that called tools (a stop condition, the
   * step limit), as the AI SDK has no output then.
   */
  readonly output?: unknown;
  /** Every model step of the run. */
  readonly steps: StepSummary[];
  /**
   * Every effect call: key, tool, outcome (`executed` | `reconciled` | `recorded`, or `failed` with
   * its last error, or `denied` with the reason), attempts.
   */
  readonly effects: RunEffectReport[];
  /** Every approval decision: approved or denied, by whom (approver, timeout, policy), why. */
  readonly approvals: ApprovalRecord[];
  /**
   * The sub-agent runs of its agent tools' calls, in the order they ended, each with its effect
   * calls, approvals and own children (absent: none). @beta
   */
  readonly children?: ChildRunReport[];
  /** What the model steps of the run and of its sub-agent runs used. @beta */
  readonly usage: RunUsage;
  /**
   * The run stopped before a step because its budget ran out (`onExhausted: 'stop'`, or a budget
   * approval denied or timed out); its `text` is its last step's (absent: it did not). @beta
   */
  readonly budgetExhausted?: BudgetExhaustion;
  /**
   * The run's conversation by reference: the key of its last entry in the workers' store, and the
   * tool results no model step saw (a run stopped by its step limit). Read it with
   * `loadConversation(store, output)` or `chamvi show <workflow id>`.
   */
  readonly conversation: ConversationRef;
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
 * to the history however long the run is.
 * @public
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
  const conversation = new ConversationState(start.conversation);
  const steps = [...start.steps];
  const effects = [...start.effects];
  const approvals = [...(start.approvals ?? [])];
  const applied = [...(start.applied ?? [])];
  const children = [...(start.children ?? [])];
  // The sub-agent runs of the running step that have started and not ended, by workflow id.
  const runningChildren = new Map<string, ChildRunReport>();
  const gate = new ApprovalGate(run, options.activityOptions?.store);
  if (options.budget !== undefined && options.budgetFrom === undefined) checkBudget(options.budget);
  const prices = options.budgetFrom?.prices ?? options.budget?.prices;
  // The run's own usage; the tree's is this and its children's reports.
  let own = start.usage ?? NO_USAGE;
  const usage = (): RunUsage => children.reduce((sum, child) => addUsage(sum, child.usage ?? NO_USAGE), own);
  const keeper =
    options.budgetFrom === undefined && options.budget !== undefined
      ? new BudgetKeeper(run, options.budget, gate, (approval) => approvals.push(approval), start.budget)
      : undefined;
  // A run without a budget asks nobody (and awaits nothing) before its steps.
  const admission: StepAdmission | undefined =
    keeper ?? (options.budgetFrom !== undefined ? new RemoteBudget(options.budgetFrom) : undefined);
  // Where this run's sub-agent runs count their steps: the top run of the tree.
  const budgetFrom: BudgetLink | undefined =
    options.budgetFrom ??
    (options.budget !== undefined
      ? {
          workflowId: workflowInfo().workflowId,
          ...(options.budget.prices !== undefined ? { prices: options.budget.prices } : {}),
        }
      : undefined);
  let budgetExhausted: BudgetExhaustion | undefined;
  const progress = { runId: run.runId, agent: run.agent, step: start.step, status: 'running' } as {
    -readonly [K in keyof AgentProgress]: AgentProgress[K];
  };
  // The running step's calls that have ended, while others of the step still wait or run.
  let settled: DispatchedCall[] = [];
  setHandler(agentProgressQuery, () => ({
    ...progress,
    effects: [...effects],
    approvals: [...approvals],
    ...conversation.snapshot(),
    ...(settled.length > 0 ? { settled: settled.map(settledCall) } : {}),
    ...(children.length + runningChildren.size > 0 ? { children: [...children, ...runningChildren.values()] } : {}),
    usage: usage(),
    ...(keeper !== undefined ? { budget: { limits: keeper.limits(), used: keeper.used() } } : {}),
  }));
  setHandler(appliedEffectsQuery, () => ({ run, applied: [...applied], effects: [...effects] }));

  const modelStepOptions = toActivityOptions(DEFAULT_MODEL_STEP_OPTIONS, options.activityOptions?.modelStep);

  let text: string | undefined;
  // The agent's compensation policy, as the last model step reported it from the worker.
  let agentCompensateOn: CompensateOn | undefined;
  // The last step's structured output (agents with `output`), as the AI SDK's result has it.
  let output: unknown;
  // Reports the run's spans when a traced run ends (and its approvals when decided), never on replay.
  const tracer = new RunTracer(run, start.trace);

  /**
   * What a run that ends with `error` throws, after undoing its applied effects when its policy
   * says so for this ending: `error` itself, or `RollbackIncompleteError` (caused by it) when a
   * compensation kept failing, so the run's final status says the rollback is incomplete.
   */
  const compensateOnEnd = async (error: TemporalFailure): Promise<TemporalFailure> => {
    const ending = isCancellation(error) ? 'cancel' : 'failure';
    if (!(options.compensateOn ?? agentCompensateOn ?? []).includes(ending) || applied.length === 0) return error;
    progress.status = 'compensating';
    const tally = await compensateApplied(run, applied, {
      ...(options.activityOptions?.compensate !== undefined
        ? { activityOptions: options.activityOptions.compensate }
        : {}),
      ...(options.activityOptions?.store !== undefined ? { storeOptions: options.activityOptions.store } : {}),
      onCompensated: (key, report) => markCompensated(effects, key, report),
    });
    setCurrentDetails(describeEffects(run.runId, effects));
    if (tally.failed === 0) {
      progress.status = 'rolled-back';
      return error;
    }
    progress.status = 'rollback-incomplete';
    return toFailure(new RollbackIncompleteError({ runId: run.runId, ...tally }), {
      cause: error,
      details: [{ effects }],
    });
  };
  try {
    for (let step = start.step; ; step++) {
      if (step > start.step || options.checkpoint !== undefined) {
        const trace = tracer.snapshot();
        // Awaited only when it returns a promise: Temporal records a stack for every promise workflow code makes.
        const before = options.beforeStep?.({
          runId: run.runId,
          step,
          ...conversation.snapshot(),
          steps,
          effects,
          approvals,
          ...(trace !== undefined ? { trace } : {}),
          ...(applied.length > 0 ? { applied } : {}),
          ...(children.length > 0 ? { children } : {}),
          ...(own.steps > 0 ? { usage: own } : {}),
          ...(keeper !== undefined ? { budget: keeper.state() } : {}),
        });
        if (before !== undefined) await before;
      }
      progress.step = step;
      budgetExhausted = admission === undefined ? undefined : await admission.admit(step, own);
      if (budgetExhausted !== undefined) break;
      // The UI names the step in each activity's summary.
      const modelStep = proxyActivities<ChamviActivities>({
        ...modelStepOptions,
        summary: `step ${step} · model · agent ${run.agent}`.slice(0, 200),
      })[ACTIVITY_NAMES.modelStep];
      // The store learns here that the execution this one continues holds the conversation no more.
      const continuedFrom = step === start.step ? workflowInfo().continuedFromExecutionRunId : undefined;
      tracer.stepStarted(step);
      const result = await modelStep({
        ...run,
        step,
        ...conversation.snapshot(),
        ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
        ...(continuedFrom !== undefined ? { continuedFrom } : {}),
        // The run stream's key; only when the run id does not say it already (no bytes added to a default run's history).
        ...(run.runId !== workflowInfo().firstExecutionRunId
          ? { firstExecutionRunId: workflowInfo().firstExecutionRunId }
          : {}),
        ...(step === start.step && tracer.capturing ? { captureTrace: true } : {}),
      });
      tracer.stepAnswered(result);
      if (result.usage !== undefined) {
        own = countStep(own, result.usage, prices);
        keeper?.counted(own);
      }
      if (result.agentCompensateOn !== undefined) agentCompensateOn = result.agentCompensateOn;
      // The agent's stopWhen (evaluated in the model step, on the steps so far) ended the run before this step.
      if (result.stopped === true) break;
      output = result.output;
      // What the model saw for this step: the tool calls' `options.messages` (AI SDK semantics, and
      // what the model step computed the effect keys from), without the assistant response.
      const seen = conversation.answered(result);
      text = result.text;
      const dispatched = await dispatchToolCalls(
        run,
        seen,
        result.toolCalls,
        options.activityOptions?.store,
        { gate, step, decided: (approval) => tracer.approvalDecided(approval, step) },
        (call) => settled.push(call),
        {
          step,
          ...(options.activityOptions !== undefined ? { activityOptions: options.activityOptions } : {}),
          started: (child) => runningChildren.set(child.workflowId, child),
          ...(budgetFrom !== undefined ? { budgetFrom } : {}),
        },
      );
      settled = [];
      runningChildren.clear();
      for (const call of dispatched) {
        if (call.child !== undefined) children.push(call.child);
        if (call.report !== undefined) effects.push(call.report);
        if (call.approval !== undefined) approvals.push(call.approval);
        const effect = appliedEffect(call, result.toolCalls);
        if (effect !== undefined) applied.push(effect);
      }
      const answers = [
        ...dispatched,
        ...(result.refusedCalls ?? []).map((c) => ({
          ...c,
          output: { type: 'error-text', value: c.message } as const,
        })),
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
      tracer.stepEnded();
      setCurrentDetails(describeEffects(run.runId, effects));
      const maxSteps = options.maxSteps ?? result.agentMaxSteps ?? Infinity;
      // Invalid calls were answered by the model step itself (a tool message with their errors).
      const answered = answers.length > 0 || conversation.endsWithToolMessage();
      if (!answered || steps.length >= maxSteps) break;
    }
  } catch (error) {
    // Only a failure ends the run: continuing as new goes on in the next execution, which carries
    // the trace on, and any other error fails the workflow task, which Temporal runs again.
    if (!(error instanceof TemporalFailure)) throw error;
    // A sub-agent run that fails or is cancelled still tells the top run what its steps used.
    if (admission !== undefined) await CancellationScope.nonCancellable(() => admission.ended(own));
    const ending = await compensateOnEnd(error);
    tracer.ended(steps, { error: ending });
    throw ending;
  }
  await admission?.ended(own);
  tracer.ended(steps, { text: text ?? '' });
  progress.status = 'completed';
  return {
    runId: run.runId,
    text: text ?? '',
    ...(output !== undefined ? { output } : {}),
    steps,
    effects,
    approvals,
    ...(children.length > 0 ? { children } : {}),
    usage: usage(),
    ...(budgetExhausted !== undefined ? { budgetExhausted } : {}),
    ...conversation.snapshot(),
  };
}

function startingPoint(options: AgentLoopOptions): AgentCheckpoint {
  if (options.checkpoint !== undefined) {
    // A checkpoint's type says `conversation`; one of a run that kept it in the history carried `messages`.
    if ((options.checkpoint as Partial<AgentCheckpoint>).conversation === undefined) {
      throw conversationInHistory('it continues from a checkpoint without a conversation reference');
    }
    return options.checkpoint;
  }
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
    conversation: { pending: messages },
    steps: [],
    effects: [],
    approvals: [],
  };
}

function describeEffects(runId: string, effects: RunEffectReport[]): string {
  const lines = effects.map(
    (e) =>
      `- ${e.toolName} · ${e.outcome} · attempts ${e.attempts}${e.compensation !== undefined ? ` · ${e.compensation.status}` : ''} · \`${e.key}\``,
  );
  return [`**run** \`${runId}\` · ${effects.length} effect call(s)`, ...lines.slice(-20)].join('\n');
}

/** A settled call as the progress query shows it: what the model will be sent for it, and its effect report. */
function settledCall(call: DispatchedCall): SettledToolCall {
  const { toolCallId, toolName, output, report } = call;
  return { toolCallId, toolName, output, ...(report !== undefined ? { report } : {}) };
}

/** The applied call among `dispatched`'s (it executed or reconciled its effect), with its planned input. */
function appliedEffect(call: DispatchedCall, plans: readonly ToolCallPlan[]): AppliedEffect | undefined {
  const report = call.report;
  if (report === undefined || (report.outcome !== 'executed' && report.outcome !== 'reconciled')) return undefined;
  const plan = plans.find((p) => p.toolCallId === call.toolCallId);
  if (plan === undefined) return undefined;
  return { key: report.key, toolName: call.toolName, toolCallId: call.toolCallId, input: plan.input };
}
