import type { Client } from '@temporalio/client';
import { APPROVAL_SECRET_ENV } from '../src/approvals/approval-secret.js';
import { createApprovalToken, type ApprovalClaims } from '../src/approvals/approval-token.js';
import { inputFingerprint } from '../src/effects/effect-key.js';
import { ChamviError } from '../src/errors/chamvi-error.js';
import { decideApprovalUpdate, pendingApprovalsQuery } from '../common/approval-handlers.js';
import { subAgentApprovals } from './sub-agent-approvals.js';
import type { ApprovalRecord, PendingApproval } from '../common/index.js';

/** What {@link listPendingApprovals} takes besides the run. @public */
export interface ListPendingApprovalsOptions {
  /**
   * List the calls of the run's running sub-agent runs too (and theirs), each with its
   * `workflowId`. Default `true`; `false` lists the run's own calls only.
   * @beta
   */
  readonly subAgents?: boolean;
}

/**
 * The calls of an agent run waiting for a decision (query `chamvi.pendingApprovals`), then those
 * of its running sub-agent runs, found through its progress query (`children`), level by level:
 * a sub-agent's call carries the `workflowId` of the run it waits in. A sub-agent run that ends
 * between the two queries lists nothing.
 * @public
 */
export async function listPendingApprovals(
  client: Client,
  workflowId: string,
  options: ListPendingApprovalsOptions = {},
): Promise<PendingApproval[]> {
  const own = await client.workflow.getHandle(workflowId).query(pendingApprovalsQuery);
  if (options.subAgents === false) return own;
  return [...own, ...(await subAgentApprovals(client, workflowId)).map((entry) => entry.pending)];
}

/**
 * The claims an approval token for `pending` must carry: its run id, call id, effect key, input
 * fingerprint and request nonce, with the decision. Pass them to `createApprovalToken` to mint a
 * token by hand (for signal `chamvi.approvalDecision`, or with an `expiresAt` for a token handed
 * to someone to send later); {@link decideApproval} does this for you. A call planned by an older
 * version lists no fingerprint; it is computed here from the input the call lists.
 * @public
 */
export function approvalClaimsFor(pending: PendingApproval, approved: boolean): ApprovalClaims {
  return {
    runId: pending.runId,
    toolCallId: pending.toolCallId,
    key: pending.key,
    fingerprint: pending.fingerprint !== '' ? pending.fingerprint : inputFingerprint(pending.input),
    nonce: pending.nonce,
    approved,
  };
}

/** What {@link decideApproval} takes. @public */
export interface DecideApprovalOptions {
  /** The tool call id of the waiting call (`PendingApproval.toolCallId`). */
  readonly toolCallId: string;
  /** `true` approves the call, `false` denies it. */
  readonly approved: boolean;
  /** Why; a denial's reason is told to the model. */
  readonly reason?: string;
  /** Who decides, for the run's record. */
  readonly approver?: string;
  /** The approval secret the workers hold. Default: `CHAMVI_APPROVAL_SECRET`. */
  readonly secret?: string | Uint8Array;
  /**
   * The workflow id of the run whose call it is: the run's own, or a sub-agent run's
   * (`PendingApproval.workflowId`). Default: the one run, among the run and its running sub-agent
   * runs, with a call of that id waiting; when there are several, {@link ApprovalAmbiguousError}.
   * @beta
   */
  readonly workflow?: string;
}

/** The call named is not waiting for a decision (never was, or was decided already). Not retryable as it is. @public */
export class ApprovalNotPendingError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'ApprovalNotPendingError';
}

/**
 * A call id names waiting calls in more than one run of the tree (the run and its sub-agent runs
 * number their calls each on their own); nothing was sent. Pass `workflow` to say whose call it is.
 * @beta
 */
export class ApprovalAmbiguousError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'ApprovalAmbiguousError';
}

/**
 * No approval secret to mint the decision's token with: none was passed and
 * `CHAMVI_APPROVAL_SECRET` is unset or empty. Nothing was sent to the run. Not retryable as it is:
 * pass `secret`, or set the variable to the workers' secret.
 */
export class ApprovalSecretMissingError extends ChamviError {
  static override readonly errorName = 'ApprovalSecretMissingError';
}

/**
 * Approves or denies a pending call of an agent run or of one of its running sub-agent runs
 * (`workflow` says which, when the call id is not unique among them): looks the call up in the pending
 * approvals (for its run id, effect key, input fingerprint and request nonce), mints the token for
 * exactly this request, its input and the decision with the approval secret, and sends it with update `chamvi.decideApproval`. Resolves to the
 * run's record of the decision; rejects when the run refuses it (an invalid token, a call decided
 * meanwhile).
 * @public
 */
export async function decideApproval(
  client: Client,
  workflowId: string,
  options: DecideApprovalOptions,
): Promise<ApprovalRecord> {
  const secret = approvalSecretOf(options, workflowId);
  const pending = await listPendingApprovals(client, workflowId, { subAgents: options.workflow !== workflowId });
  const whose = (p: PendingApproval) => p.workflowId ?? workflowId;
  const matches = pending.filter(
    (p) => p.toolCallId === options.toolCallId && (options.workflow === undefined || whose(p) === options.workflow),
  );
  const call = matches[0];
  if (call === undefined) {
    const waiting = pending.map((p) =>
      p.workflowId === undefined ? p.toolCallId : `${p.toolCallId} of ${p.workflowId}`,
    );
    const of =
      options.workflow === undefined || options.workflow === workflowId ? '' : ` (sub-agent run ${options.workflow})`;
    throw new ApprovalNotPendingError(
      `Tool call ${options.toolCallId} of workflow ${workflowId}${of} is not waiting for approval${waiting.length > 0 ? ` (waiting: ${waiting.join(', ')})` : ' (nothing is waiting)'}.`,
    );
  }
  if (matches.length > 1) {
    throw new ApprovalAmbiguousError(
      `Tool call ${options.toolCallId} waits in ${matches.length} runs of workflow ${workflowId}'s tree (${matches.map(whose).join(', ')}); nothing was sent. Pass workflow: the id of the run whose call you decide.`,
    );
  }
  return decidePending(client, whose(call), call, options, secret);
}

/** The approval secret of `options`, else `CHAMVI_APPROVAL_SECRET`; throws {@link ApprovalSecretMissingError} when neither is set. */
function approvalSecretOf(options: Pick<DecideApprovalOptions, 'secret' | 'toolCallId'>, workflowId: string) {
  const secret = options.secret ?? process.env[APPROVAL_SECRET_ENV];
  if (secret === undefined || secret === '') {
    throw new ApprovalSecretMissingError(
      `No approval secret to sign the decision on tool call ${options.toolCallId} of workflow ${workflowId} with; nothing was sent. Pass secret, or set ${APPROVAL_SECRET_ENV} to the workers' secret.`,
    );
  }
  return secret;
}

/**
 * Decides request `call` as the caller saw it: the token binds its nonce and input fingerprint,
 * so a call planned again meanwhile (a new request) refuses it. `run`: the workflow id of the run
 * the call waits in.
 */
export async function decidePending(
  client: Client,
  run: string,
  call: PendingApproval,
  options: Omit<DecideApprovalOptions, 'workflow'>,
  secret = approvalSecretOf(options, run),
): Promise<ApprovalRecord> {
  const token = createApprovalToken(secret, approvalClaimsFor(call, options.approved));
  return client.workflow.getHandle(run).executeUpdate(decideApprovalUpdate, {
    args: [
      {
        toolCallId: call.toolCallId,
        approved: options.approved,
        token,
        ...(options.reason !== undefined ? { reason: options.reason } : {}),
        ...(options.approver !== undefined ? { approver: options.approver } : {}),
      },
    ],
  });
}
