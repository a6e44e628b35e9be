// The approval shapes shared by the workflow's approval gate, the activities that plan and check
// approvals, and the client helpers that list and decide them.

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
   * available, so the pending approval can show it.
   */
  readonly fingerprint?: string;
}

/** A call waiting for a decision, as the `chamvi.pendingApprovals` query lists it. @public */
export interface PendingApproval {
  /** The run id (`ctx.run.runId`) of the run waiting. */
  readonly runId: string;
  /** Name of the agent whose call waits. */
  readonly agent: string;
  /** The tool call id of the waiting call, which a decision names. */
  readonly toolCallId: string;
  /** Name of the tool called. */
  readonly toolName: string;
  /** The call's input, as the model step planned it. */
  readonly input: unknown;
  /** The effect key the decision is bound to (empty for a plain tool). */
  readonly key: string;
  /**
   * The input fingerprint the decision is bound to: `inputFingerprint(input)`, the hex SHA-256 of
   * the canonical JSON of `input` above. An approval token must name it, so it approves exactly
   * this input (also when the effect key ignores part of it). Empty when the plan carried none:
   * `decideApproval` then computes it from `input`.
   */
  readonly fingerprint: string;
  /**
   * The request's nonce, drawn by the run each time a call asks for a decision: an approval token
   * must name it, so it answers this request only (not the same call id and input asking again
   * in a later step, or after a reset).
   */
  readonly nonce: string;
  /** The model step (0-based) that planned the call. */
  readonly step: number;
  /** Why the call needs approval, when the approval rule said. */
  readonly reason?: string;
  /** Workflow time, ISO 8601. */
  readonly requestedAt: string;
  /** When silence decides (`onTimeout`), ISO 8601. */
  readonly deadline: string;
  /** What the run does when nobody decides before `deadline`. */
  readonly onTimeout: 'deny' | 'approve';
  /**
   * The workflow id of the sub-agent run the call waits in, when `listPendingApprovals` found it
   * below the run it was asked about; absent: that run's own call. @beta
   */
  readonly workflowId?: string;
}

/** A decision sent to the run (update `chamvi.decideApproval`, or signal `chamvi.approvalDecision`). */
export interface ApprovalDecision {
  readonly toolCallId: string;
  readonly approved: boolean;
  /** Why; a denial's reason is told to the model. */
  readonly reason?: string;
  /** An approval token minted for this run, call, effect key, input fingerprint, request nonce and decision (`createApprovalToken`). */
  readonly token: string;
  /** Who decided, for the record. */
  readonly approver?: string;
}

/** How a call's approval ended, as the run's result and the decision update report it. @public */
export interface ApprovalRecord {
  /** The tool call id of the call decided. */
  readonly toolCallId: string;
  /** Name of the tool called. */
  readonly toolName: string;
  /** The effect key the decision was bound to (empty for a plain tool). */
  readonly key: string;
  /** Whether the call was approved (and ran) or denied. */
  readonly approved: boolean;
  /** `approver`: a verified decision; `timeout`: nobody answered in time; `policy`: the approval rule said `denied` or `approved`. */
  readonly decidedBy: 'approver' | 'timeout' | 'policy';
  /** Why, as the decision gave it (a denial's reason is told to the model). */
  readonly reason?: string;
  /** Who decided, as the decision named them. */
  readonly approver?: string;
  /** When the call asked for a decision: workflow time, ISO 8601. */
  readonly requestedAt: string;
  /** When it was decided: workflow time, ISO 8601. */
  readonly decidedAt: string;
}

/** The decision on a call that needed approval, as the activity running it checks it. */
export interface ApprovalEvidence {
  readonly approved: boolean;
  readonly decidedBy: 'approver' | 'timeout' | 'policy';
  /** The approver's token (bound to run, call, effect key, input fingerprint, request nonce and decision). */
  readonly token?: string;
  /** The nonce of the request the decision answered (with `token`). */
  readonly nonce?: string;
}
