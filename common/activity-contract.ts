// What the agent workflow hands the chamvi activities and what they answer: plain JSON, so both
// sides (the sandboxed workflow and the Node activities) can import it.
import type { EffectRecordInput } from '../src/stores/effect-store.js';
import type { ToolActivityOptions } from './activity-options.js';
import type { ApprovalEvidence, ApprovalPlan } from './approval-types.js';
import type { EffectCallReport } from './effect-call-report.js';
import type { CallConversationRef, ConversationRef, ModelStepConversation } from './conversation-ref.js';
import type { JsonMessage, JsonToolOutput } from './json-messages.js';
import type { RunTraceContext } from './run-trace.js';
import type { StepUsage } from './run-usage.js';

/** The run a step or call belongs to, as activities receive it. */
export interface RunRef {
  readonly agent: string;
  readonly runId: string;
  readonly trigger?: unknown;
  readonly state?: Record<string, unknown>;
  readonly artifacts?: Record<string, unknown>;
}

/** Input of the model-step activity: one model call. */
export interface ModelStepInput extends RunRef {
  /** 0-based index of the step within the run. */
  readonly step: number;
  /** The conversation by reference: the activity reads the stored part and stores the rest. */
  readonly conversation: ConversationRef;
  /**
   * The run's step limit when the workflow sets one (`maxSteps` of the run); absent: the agent's.
   * The step that reaches it closes the run's conversation, whatever the model answers.
   */
  readonly maxSteps?: number;
  /**
   * On the first model step of a workflow execution that continues another (continue-as-new, a
   * workflow retry, cron): the Temporal run id of that finished execution. The step's write tells
   * the conversation store that it no longer holds the run's entries.
   */
  readonly continuedFrom?: string;
  /**
   * The workflow's first execution run id, when it differs from `runId` (a custom run id): with the
   * run id and the workflow id, the key of the run's stream. Absent: it is `runId`.
   */
  readonly firstExecutionRunId?: string;
  /** Answer the run's tracing identity (`trace` of the result): the first step of an execution of a run that has none yet. */
  readonly captureTrace?: boolean;
}

/** A valid tool call of a step, planned by the model-step activity (which knows the tools). */
export interface ToolCallPlan {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  /**
   * `effect`: runs the effect protocol; `plain`: runs execute as an ordinary activity; `agent`:
   * runs a sub-agent as a child workflow (`child`).
   */
  readonly kind: 'effect' | 'plain' | 'agent';
  /** The effect key (effect tools only), computed once so identical calls can share one activity. */
  readonly key?: string;
  /** The sub-agent run of an agent tool's call (kind `agent` only). */
  readonly child?: ChildRunPlan;
  /** Activity options for this tool, from the worker's registration (absent: the library defaults). */
  readonly options?: ToolActivityOptions;
  /** Set when the call needs a decision (`user-approval`) or was refused by policy (`denied`). */
  readonly approval?: ApprovalPlan;
  /**
   * Set when the approval rule approved the call without asking (`approved`): it runs as a call
   * without a rule, and the run's approvals record the decision (`decidedBy: 'policy'`).
   */
  readonly approvedByPolicy?: { readonly reason?: string };
}

/** A sub-agent run, as the model step plans it for an agent tool's call. */
export interface ChildRunPlan {
  /** The sub-agent's name (registered on the worker with the agent that calls it). */
  readonly agent: string;
  readonly prompt: string;
  /**
   * `<tool>:<step>:<16 hex digits of the input's SHA-256>`: the child's run id is `<parent run
   * id>:<this>`, its workflow id `<parent workflow id>:<this>`.
   */
  readonly id: string;
}

/** Output of the model-step activity. */
export interface ModelStepResult {
  /** What the step stored: the new head, and what the tool calls see (absent for a `stopped` step). */
  readonly conversation?: ModelStepConversation;
  readonly text: string;
  readonly finishReason: string;
  readonly toolCalls: ToolCallPlan[];
  /** Calls that cannot run (no `execute`), answered to the model as errors (absent: none). */
  readonly refusedCalls?: Array<{ toolCallId: string; toolName: string; message: string }>;
  /** The agent's own step limit, from its definition on the worker (absent: no bound, an agent with `stopWhen` and no `maxSteps`). */
  readonly agentMaxSteps?: number;
  /** The agent's `compensateOn`, from its definition on the worker (absent: it sets none). */
  readonly agentCompensateOn?: Array<'failure' | 'cancel'>;
  /**
   * A stop condition of the agent (`stopWhen`) is met by the steps so far: the step made no model
   * call, and the run ends without it (absent: the step ran).
   */
  readonly stopped?: boolean;
  /** The step's parsed structured output (agents with `output`, on the final step only), as JSON. */
  readonly output?: unknown;
  /**
   * The run's tracing identity, per AI SDK integration that reports durable runs, when the input
   * asked for it (`captureTrace`) and there is one (absent: no such integration on the worker).
   */
  readonly trace?: RunTraceContext[];
  /** What the step's model call used (absent: a step a stop condition ended before its call). */
  readonly usage?: StepUsage;
}

/** Input of the effect-call and tool-call activities. */
export interface ToolCallInput extends RunRef {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly input: unknown;
  readonly key?: string;
  /**
   * What the model saw for the step that produced the call (AI SDK's `options.messages`), by
   * reference: the activity reads it from the store when the tool looks.
   */
  readonly conversation?: CallConversationRef;
  /**
   * The same, whole: from workflow-side tools (`effectToolCalls`), which hold their AI SDK call's
   * messages. With neither, the tool sees no messages.
   */
  readonly messages?: JsonMessage[];
  /** Also return the tool's raw result (for workflow-side tools that call effect tools; see `callEffectTool`). */
  readonly includeResult?: boolean;
  /** How the call's approval was decided, when it needed one; the activity checks it again. */
  readonly approval?: ApprovalEvidence;
}

/** The report of a planned effect call, without what the plan already says (key, tool, call id). */
export type PlannedCallReport = Pick<EffectCallReport, 'outcome' | 'attempts' | 'recordPending'> & {
  readonly key?: undefined;
};

/** A record the effect activity could not write; the workflow retries it through the record activity. */
export interface UnrecordedEffect {
  readonly key: string;
  readonly record: EffectRecordInput;
}

/** Output of the effect-call and tool-call activities. */
export interface ToolCallResult {
  /** What the model sees (the tool's `toModelOutput`, or text/json of the result). */
  readonly output: JsonToolOutput;
  /**
   * How the effect call went. For a call the workflow planned (an input with `key` and a
   * `conversation` reference), only what the workflow does not know already (outcome, attempts,
   * record pending): it adds key, tool and call id from its plan, so they are not in the history twice.
   */
  readonly report?: EffectCallReport | PlannedCallReport;
  readonly unrecorded?: UnrecordedEffect;
  /** The raw result, when the input asked for it (`includeResult`). */
  readonly result?: unknown;
}

/**
 * Input of the approval-verification activity: the token and what it must be bound to. The
 * activity computes the input's fingerprint itself, so the token is checked against the input the
 * run waits on, not against a fingerprint it is told.
 */
export interface VerifyApprovalInput {
  readonly token: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly key: string;
  /** The call's input, as the run will hand it to the activity that runs the call. */
  readonly input: unknown;
  /** The pending request's nonce. */
  readonly nonce: string;
  readonly approved: boolean;
}

/** What the approval-verification activity answers: a verdict, never a throw, so a refusal is not retried. */
export interface ApprovalVerdict {
  readonly valid: boolean;
  readonly problem?: string;
}

/**
 * Input of the compensation activity: which applied call to undo. The activity trusts none of it
 * blindly: it reads the call's record from the store and checks that it is of this tool, this
 * input and this run before the tool's `compensate` gets the recorded result.
 */
export interface CompensateInput extends RunRef {
  readonly toolName: string;
  readonly toolCallId: string;
  /** The original effect's key (the compensation's is `<key>:compensate`). */
  readonly key: string;
  /** The original call's input, as planned. */
  readonly input: unknown;
}

/** What the compensation activity answers: how the undo went, or that the tool has none. */
export type CompensateResult =
  | {
      readonly status: 'compensated';
      readonly outcome: EffectCallReport['outcome'];
      readonly attempts: number;
      /** The undo's record, when its write failed: the workflow writes it through the effect-store activity. */
      readonly unrecorded?: UnrecordedEffect;
    }
  | { readonly status: 'no-compensation' };

/**
 * The activities the agent workflow schedules, by name (the values of `ACTIVITY_NAMES`).
 * Implemented by `createChamviActivities`.
 */
export interface ChamviActivities {
  'chamvi.modelStep'(input: ModelStepInput): Promise<ModelStepResult>;
  'chamvi.effectCall'(input: ToolCallInput): Promise<ToolCallResult>;
  'chamvi.toolCall'(input: ToolCallInput): Promise<ToolCallResult>;
  'chamvi.recordEffect'(unrecorded: UnrecordedEffect): Promise<void>;
  'chamvi.verifyApproval'(input: VerifyApprovalInput): Promise<ApprovalVerdict>;
  'chamvi.compensate'(input: CompensateInput): Promise<CompensateResult>;
}
