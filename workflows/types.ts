// JSON shapes exchanged between the agent workflow and the chamvi activities. Workflow code runs
// in Temporal's sandbox and must not import `ai`, so messages are typed structurally here.

/** An AI SDK `ModelMessage`, as JSON. */
export interface JsonMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: unknown;
  readonly [extra: string]: unknown;
}

/** An AI SDK `ToolResultOutput` (what the model sees of a tool result), as JSON. */
export type JsonToolOutput =
  | { readonly type: 'text' | 'error-text'; readonly value: string }
  | { readonly type: 'json' | 'error-json'; readonly value: unknown }
  | { readonly type: string; readonly value?: unknown; readonly [extra: string]: unknown };

/** Activity options in their JSON form (durations as ms numbers or Temporal duration strings). */
export interface ToolActivityOptions {
  readonly startToCloseTimeout?: string | number;
  readonly scheduleToCloseTimeout?: string | number;
  readonly heartbeatTimeout?: string | number;
  readonly retry?: {
    readonly initialInterval?: string | number;
    readonly backoffCoefficient?: number;
    readonly maximumInterval?: string | number;
    readonly maximumAttempts?: number;
    readonly nonRetryableErrorTypes?: string[];
  };
  readonly taskQueue?: string;
}

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
  readonly messages: JsonMessage[];
}

/** A valid tool call of a step, planned by the model-step activity (which knows the tools). */
export interface ToolCallPlan {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  /** `effect`: runs the effect protocol; `plain`: runs execute as an ordinary activity. */
  readonly kind: 'effect' | 'plain';
  /** The effect key (effect tools only), computed once so identical calls can share one activity. */
  readonly key?: string;
  /** Activity options for this tool, from the worker's registration. */
  readonly options: ToolActivityOptions;
  /** Set when the call needs a decision (`user-approval`) or was refused by policy (`denied`). */
  readonly approval?: ApprovalPlan;
}

/** How a call waits for its approval, as the model step planned it from the worker's registration. */
export interface ApprovalPlan {
  /** `user-approval`: wait for a signed decision; `denied`: refused by the approval policy, no wait. */
  readonly status: 'user-approval' | 'denied';
  /** Shown to the approver (`user-approval`) or told to the model (`denied`). */
  readonly reason?: string;
  /** How long to wait for a decision (ms or a Temporal duration string). Default 7 days. */
  readonly timeout?: string | number;
  /** What silence means once the timeout passes. Default `deny`. */
  readonly onTimeout?: 'deny' | 'approve';
  /**
   * `inputFingerprint(input)` of the call (`user-approval` only), computed where hashing is
   * available, so the pending approval can show it; absent in plans of older versions.
   */
  readonly fingerprint?: string;
}

/** A call waiting for a decision, as the `chamvi.pendingApprovals` query lists it. */
export interface PendingApproval {
  readonly runId: string;
  readonly agent: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  /** The effect key the decision is bound to (empty for a plain tool). */
  readonly key: string;
  /**
   * The input fingerprint the decision is bound to: `inputFingerprint(input)`, the hex SHA-256 of
   * the canonical JSON of `input` above. An approval token must name it, so it approves exactly
   * this input (also when the effect key ignores part of it). Empty only for a call planned by an
   * older version, which did not compute it: `decideApproval` then computes it from `input`.
   */
  readonly fingerprint: string;
  readonly step: number;
  readonly reason?: string;
  /** Workflow time, ISO 8601. */
  readonly requestedAt: string;
  /** When silence decides (`onTimeout`), ISO 8601. */
  readonly deadline: string;
  readonly onTimeout: 'deny' | 'approve';
}

/** A decision sent to the run (update `chamvi.decideApproval`, or signal `chamvi.approvalDecision`). */
export interface ApprovalDecision {
  readonly toolCallId: string;
  readonly approved: boolean;
  /** Why; a denial's reason is told to the model. */
  readonly reason?: string;
  /** An approval token minted for this run, call, effect key, input fingerprint and decision (`createApprovalToken`). */
  readonly token: string;
  /** Who decided, for the record. */
  readonly approver?: string;
}

/** How a call's approval ended, as the run's result and the decision update report it. */
export interface ApprovalRecord {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly key: string;
  readonly approved: boolean;
  /** `approver`: a verified decision; `timeout`: nobody answered in time; `policy`: the approval rule said `denied`. */
  readonly decidedBy: 'approver' | 'timeout' | 'policy';
  readonly reason?: string;
  readonly approver?: string;
  readonly requestedAt: string;
  readonly decidedAt: string;
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
  readonly approved: boolean;
}

/** Output of the model-step activity. */
export interface ModelStepResult {
  /** Messages to append to the conversation (the assistant message, and errors for invalid calls). */
  readonly responseMessages: JsonMessage[];
  readonly text: string;
  readonly finishReason: string;
  readonly toolCalls: ToolCallPlan[];
  /** Calls that cannot run (no `execute`), answered to the model as errors. */
  readonly refusedCalls: Array<{ toolCallId: string; toolName: string; message: string }>;
  /** The agent's own step limit, from its definition on the worker. */
  readonly agentMaxSteps: number;
  readonly usage?: { readonly inputTokens?: number; readonly outputTokens?: number };
}

/** Input of the effect-call and tool-call activities. */
export interface ToolCallInput extends RunRef {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly input: unknown;
  readonly key?: string;
  /** The messages sent to the model for the step that produced the call (AI SDK's `options.messages`). */
  readonly messages: JsonMessage[];
  /** Also return the tool's raw result (for workflow-side tools that call effect tools; see `callEffectTool`). */
  readonly includeResult?: boolean;
  /** How the call's approval was decided, when it needed one; the activity checks it again. */
  readonly approval?: ApprovalEvidence;
}

/** The decision on a call that needed approval, as the activity running it checks it. */
export interface ApprovalEvidence {
  readonly approved: boolean;
  readonly decidedBy: 'approver' | 'timeout' | 'policy';
  /** The approver's token (bound to run, call, effect key, input fingerprint and decision). */
  readonly token?: string;
}

/** Outcome of one effect call, as reported by runs and queries. */
export interface EffectReportEntry {
  readonly key: string;
  readonly toolName: string;
  readonly toolCallId?: string;
  readonly outcome: 'recorded' | 'reconciled' | 'executed';
  /** The activity attempt that answered (1 = first try). */
  readonly attempts: number;
  readonly recordPending?: boolean;
}

/** A record the effect activity could not write; the workflow retries it through the record activity. */
export interface UnrecordedEffect {
  readonly key: string;
  readonly record: {
    readonly toolName: string;
    readonly result: unknown;
    readonly origin: 'executed' | 'reconciled';
    readonly runId?: string;
    readonly attempt?: number;
    readonly fingerprint?: string;
    readonly resultUndefined?: boolean;
  };
}

/** Output of the effect-call and tool-call activities. */
export interface ToolCallResult {
  /** What the model sees (the tool's `toModelOutput`, or text/json of the result). */
  readonly output: JsonToolOutput;
  readonly report?: EffectReportEntry;
  readonly unrecorded?: UnrecordedEffect;
  /** The raw result, when the input asked for it (`includeResult`). */
  readonly result?: unknown;
}

/** The activities the agent workflow schedules, by name. Implemented by `createChamviActivities`. */
export interface ChamviActivities {
  'chamvi.modelStep'(input: ModelStepInput): Promise<ModelStepResult>;
  'chamvi.effectCall'(input: ToolCallInput): Promise<ToolCallResult>;
  'chamvi.toolCall'(input: ToolCallInput): Promise<ToolCallResult>;
  'chamvi.recordEffect'(unrecorded: UnrecordedEffect): Promise<void>;
  'chamvi.lookupEffect'(key: string): Promise<{ found: boolean; result?: unknown; origin?: string }>;
  'chamvi.verifyApproval'(input: VerifyApprovalInput): Promise<{ valid: boolean; problem?: string }>;
}
