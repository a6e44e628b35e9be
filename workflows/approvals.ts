import {
  ApplicationFailure,
  condition,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import { DEFAULT_VERIFY_APPROVAL_OPTIONS, toActivityOptions } from '../common/activity-options.js';
import { ACTIVITY_NAMES } from '../common/activity-names.js';
import { approvalDecisionSignal, decideApprovalUpdate, pendingApprovalsQuery } from '../common/approval-handlers.js';
import { toFailure } from '../common/to-failure.js';
import { ApprovalRefusedError, DuplicateToolCallIdError, InvalidAgentInputError } from '../src/errors/errors.js';
// Sandbox-safe core: the one module of src/ workflow code imports at runtime (see eslint.config.js).
import { approvalClaimsProblem, readApprovalToken } from '../src/approvals/approval-token-format.js';
import { VERIFICATION_BURST, VerificationBudget } from './verification-budget.js';
import type {
  ApprovalDecision,
  ApprovalEvidence,
  ApprovalRecord,
  ApprovalVerdict,
  ChamviActivities,
  PendingApproval,
  RunRef,
  StoreActivityOptions,
  ToolCallPlan,
} from '../common/index.js';

/** How long a call waits for a decision when the registration sets no `approvalTimeout`. */
export const DEFAULT_APPROVAL_TIMEOUT = '7 days';

export { decideApprovalUpdate, approvalDecisionSignal, pendingApprovalsQuery };

interface Waiting {
  readonly request: PendingApproval;
  decision?: ApprovalRecord;
  /** The verified token of an approver's decision: the activity that runs the call checks it again. */
  token?: string;
}

/**
 * The approval gate of one run: the calls waiting for a decision, the handlers that take
 * decisions, and the decisions taken. A decision counts only when its token verifies (in the
 * `chamvi.verifyApproval` activity, where the worker holds the secret and hashes the input)
 * against this run, this call, its effect key, the fingerprint of the very input the call will run
 * with, the request's nonce (drawn anew each time a call asks) and the decision; anything else is
 * refused and the call keeps waiting.
 *
 * What can be refused without the secret is refused by the update's validator, so it never
 * reaches the history: a value that is no v3 token, a token whose claims name another run, call,
 * key, input, request or decision, a call that is not waiting. Only a token that claims exactly
 * the pending request is checked by the activity, and those checks are rationed (see
 * {@link VerificationBudget}: 10 at once, then one an hour, counting only the ones that fail).
 * A decision sent by signal is refused by the same checks, but Temporal has written the signal
 * to the history by then: prefer the update.
 *
 * All of it is workflow state, rebuilt from history on replay, so a wait survives worker
 * restarts and can last days.
 */
export class ApprovalGate {
  private readonly waiting = new Map<string, Waiting>();
  private readonly budget = new VerificationBudget();

  constructor(
    private readonly run: RunRef,
    private readonly verifyOptions?: StoreActivityOptions,
  ) {
    setHandler(pendingApprovalsQuery, () =>
      [...this.waiting.values()].filter((w) => w.decision === undefined).map((w) => w.request),
    );
    setHandler(decideApprovalUpdate, (decision) => this.decide(decision), {
      validator: (decision: ApprovalDecision) => this.validate(decision),
    });
    setHandler(approvalDecisionSignal, async (decision) => {
      try {
        this.validate(decision);
        await this.decide(decision);
      } catch (error) {
        log.warn('Refused an approval decision sent by signal', {
          toolCallId: decision?.toolCallId,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    });
  }

  /**
   * Waits for the decision on `call` (a `user-approval` plan), or its timeout. A `denied` plan is
   * answered at once without waiting. Each request gets a nonce of its own (`uuid4()`, replayed
   * from the workflow's seed), which a decision's token must name.
   *
   * @throws ApplicationFailure `DuplicateToolCallIdError` (non-retryable, so the run fails) when
   *   another call with the same id is still waiting.
   */
  async decisionFor(call: ToolCallPlan, step: number): Promise<ApprovalRecord> {
    const plan = call.approval;
    const requestedAt = new Date().toISOString();
    const key = call.key ?? '';
    const reason = plan?.reason;
    if (plan === undefined || plan.status === 'denied') {
      return {
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        key,
        approved: false,
        decidedBy: 'policy',
        reason: reason ?? 'The approval policy denies this call.',
        requestedAt,
        decidedAt: requestedAt,
      };
    }
    const earlier = this.waiting.get(call.toolCallId);
    if (earlier !== undefined && earlier.decision === undefined) {
      // The model step refuses such a step; this holds for plans from elsewhere too: the second call would wait forever.
      throw ApplicationFailure.create({
        type: DuplicateToolCallIdError.errorName,
        nonRetryable: true,
        message: `Tool calls ${earlier.request.toolName} and ${call.toolName} of run ${this.run.runId} (step ${step}) both have the id "${call.toolCallId}" and both wait for approval; a decision names its call by id, so the run cannot tell them apart. Give each call of a step its own toolCallId.`,
      });
    }
    const timeout = plan.timeout ?? DEFAULT_APPROVAL_TIMEOUT;
    const onTimeout = plan.onTimeout ?? 'deny';
    const timeoutMs = durationMs(timeout);
    const nonce = uuid4();
    const waiting: Waiting = {
      request: {
        runId: this.run.runId,
        agent: this.run.agent,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: call.input,
        key,
        fingerprint: plan.fingerprint ?? '',
        nonce,
        step,
        ...(reason !== undefined ? { reason } : {}),
        requestedAt,
        deadline: new Date(Date.now() + timeoutMs).toISOString(),
        onTimeout,
      },
    };
    this.waiting.set(call.toolCallId, waiting);
    const answered = await condition(() => waiting.decision !== undefined, timeoutMs);
    if (!answered) {
      waiting.decision = {
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        key,
        approved: onTimeout === 'approve',
        decidedBy: 'timeout',
        reason: `Nobody decided within ${typeof timeout === 'number' ? `${timeout} ms` : timeout}; the call is ${onTimeout === 'approve' ? 'approved' : 'denied'} by default.`,
        requestedAt,
        decidedAt: new Date().toISOString(),
      };
    }
    return waiting.decision as ApprovalRecord;
  }

  /**
   * What the activity running an approved call gets to check the approval again: the decision,
   * who took it, and the approver's token (none for a timeout or the policy).
   */
  evidenceFor(toolCallId: string): ApprovalEvidence | undefined {
    const waiting = this.waiting.get(toolCallId);
    if (waiting?.decision === undefined) return undefined;
    const { approved, decidedBy } = waiting.decision;
    const { nonce } = waiting.request;
    return {
      approved,
      decidedBy,
      ...(waiting.token !== undefined ? { token: waiting.token } : {}),
      ...(waiting.token !== undefined ? { nonce } : {}),
    };
  }

  /**
   * The checks that need no secret, before a decision is accepted into history (a rejected update
   * leaves no trace): the decision's shape, a call waiting for it, a v3 token whose claims are
   * this request's, and a verification left in the budget.
   */
  private validate(decision: ApprovalDecision): void {
    if (typeof decision !== 'object' || decision === null || typeof decision.toolCallId !== 'string') {
      throw new TypeError('An approval decision needs { toolCallId, approved, token }.');
    }
    if (typeof decision.approved !== 'boolean') throw new TypeError('approved must be true or false.');
    if (typeof decision.token !== 'string' || decision.token.length === 0) {
      throw new TypeError('An approval decision needs the approval token minted for it (createApprovalToken).');
    }
    const waiting = this.waiting.get(decision.toolCallId);
    if (waiting === undefined)
      throw new Error(`Tool call ${decision.toolCallId} of run ${this.run.runId} is not waiting for approval.`);
    if (waiting.decision !== undefined) {
      throw new Error(
        `Tool call ${decision.toolCallId} was already ${waiting.decision.approved ? 'approved' : 'denied'} (by ${waiting.decision.decidedBy}).`,
      );
    }
    const { request } = waiting;
    const read = readApprovalToken(decision.token);
    const problem = read.ok
      ? approvalClaimsProblem(
          // A plan without a fingerprint leaves none to compare here: the activity computes it from the input.
          request.fingerprint === '' ? { ...read.claims, fingerprint: '' } : read.claims,
          {
            runId: request.runId,
            toolCallId: request.toolCallId,
            key: request.key,
            fingerprint: request.fingerprint,
            nonce: request.nonce,
            approved: decision.approved,
          },
        )
      : read.problem;
    if (problem !== undefined) throw refusal(request.toolCallId, problem);
    const now = Date.now();
    if (this.budget.available(now) < 1) throw refusal(request.toolCallId, this.exhausted(now));
  }

  private async decide(decision: ApprovalDecision): Promise<ApprovalRecord> {
    const waiting = this.waiting.get(decision.toolCallId);
    if (waiting === undefined)
      throw toFailure(new ApprovalRefusedError(`Tool call ${decision.toolCallId} is not waiting for approval.`));
    const { request } = waiting;
    const now = Date.now();
    // The validator only looks (it must not change state); the handler, run right after it, takes the check.
    if (!this.budget.take(now)) throw refusal(request.toolCallId, this.exhausted(now));
    const verify = proxyActivities<ChamviActivities>({
      ...toActivityOptions(DEFAULT_VERIFY_APPROVAL_OPTIONS, this.verifyOptions),
      summary: `verify approval · call ${request.toolCallId}`,
    })[ACTIVITY_NAMES.verifyApproval];
    let verdict: ApprovalVerdict;
    try {
      verdict = await verify({
        token: decision.token,
        runId: request.runId,
        toolCallId: request.toolCallId,
        key: request.key,
        input: request.input,
        nonce: request.nonce,
        approved: decision.approved,
      });
    } catch (error) {
      if (isCancellation(error)) throw error;
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      throw refusal(
        request.toolCallId,
        `the token could not be verified (${cause instanceof Error ? cause.message : String(cause)}); the call keeps waiting: send the decision again`,
      );
    }
    if (!verdict.valid) throw refusal(request.toolCallId, verdict.problem ?? 'invalid token');
    this.budget.giveBack();
    // Decided while the token was being checked (another decision, or the timeout): the first one stands.
    if (waiting.decision !== undefined) {
      throw toFailure(
        new ApprovalRefusedError(
          `Tool call ${request.toolCallId} was already ${waiting.decision.approved ? 'approved' : 'denied'} (by ${waiting.decision.decidedBy}).`,
        ),
      );
    }
    waiting.token = decision.token;
    waiting.decision = {
      toolCallId: request.toolCallId,
      toolName: request.toolName,
      key: request.key,
      approved: decision.approved,
      decidedBy: 'approver',
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      ...(decision.approver !== undefined ? { approver: decision.approver } : {}),
      requestedAt: request.requestedAt,
      decidedAt: new Date().toISOString(),
    };
    return waiting.decision;
  }

  private exhausted(now: number): string {
    return `this run has checked too many approval tokens that did not verify (${VERIFICATION_BURST} at once, then one an hour, to bound its history); the next check is possible at ${new Date(this.budget.nextAt(now)).toISOString()} (workflow time). Check that the approver holds the workers' approval secret`;
  }
}

/** The failure a refused decision gets: the update fails with it (a signal's is logged). */
function refusal(toolCallId: string, problem: string): ApplicationFailure {
  return toFailure(new ApprovalRefusedError(`Approval decision for tool call ${toolCallId} refused: ${problem}.`));
}

const UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1_000,
  sec: 1_000,
  second: 1_000,
  seconds: 1_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};

/** A duration (ms, or a string like `'3 days'`, `'90 minutes'`, `'1.5h'`) in ms. */
export function durationMs(duration: string | number): number {
  if (typeof duration === 'number') return duration;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(duration);
  const unit = match?.[2] === undefined || match[2] === '' ? 'ms' : match[2].toLowerCase();
  const factor = UNITS[unit];
  if (match === null || factor === undefined) {
    throw toFailure(
      new InvalidAgentInputError(`Cannot read the duration "${duration}" (try '3 days' or a number of ms).`),
    );
  }
  return Number(match[1]) * factor;
}
