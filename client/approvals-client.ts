import type { Client } from '@temporalio/client';
import { APPROVAL_SECRET_ENV } from '../src/approvals/approval-secret.js';
import { createApprovalToken, type ApprovalClaims } from '../src/approvals/approval-token.js';
import { inputFingerprint } from '../src/effects/effect-key.js';
import { ChamviError } from '../src/errors/chamvi-error.js';
import { decideApprovalUpdate, pendingApprovalsQuery } from '../common/approval-handlers.js';
import type { ApprovalRecord, PendingApproval } from '../common/index.js';

/** The calls of an agent run waiting for a decision (query `chamvi.pendingApprovals`). */
export async function listPendingApprovals(client: Client, workflowId: string): Promise<PendingApproval[]> {
  return client.workflow.getHandle(workflowId).query(pendingApprovalsQuery);
}

/**
 * The claims an approval token for `pending` must carry: its run id, call id, effect key, input
 * fingerprint and request nonce, with the decision. Pass them to `createApprovalToken` to mint a
 * token by hand (for signal `chamvi.approvalDecision`, or with an `expiresAt` for a token handed
 * to someone to send later); {@link decideApproval} does this for you. A call planned by an older
 * version lists no fingerprint; it is computed here from the input the call lists.
 */
export function approvalClaimsFor(pending: PendingApproval, approved: boolean): ApprovalClaims {
  return {
    runId: pending.runId,
    toolCallId: pending.toolCallId,
    key: pending.key,
    fingerprint: pending.fingerprint !== '' ? pending.fingerprint : inputFingerprint(pending.input),
    nonce: pending.nonce ?? '',
    approved,
  };
}

/** What {@link decideApproval} takes. */
export interface DecideApprovalOptions {
  readonly toolCallId: string;
  readonly approved: boolean;
  /** Why; a denial's reason is told to the model. */
  readonly reason?: string;
  /** Who decides, for the run's record. */
  readonly approver?: string;
  /** The approval secret the workers hold. Default: `CHAMVI_APPROVAL_SECRET`. */
  readonly secret?: string | Uint8Array;
}

/** The call named is not waiting for a decision (never was, or was decided already). Not retryable as it is. */
export class ApprovalNotPendingError extends ChamviError {
  static override readonly errorName = 'ApprovalNotPendingError';
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
 * Approves or denies a pending call of an agent run: looks the call up in the run's pending
 * approvals (for its run id, effect key, input fingerprint and request nonce), mints the token for
 * exactly this request, its input and the decision with the approval secret, and sends it with update `chamvi.decideApproval`. Resolves to the
 * run's record of the decision; rejects when the run refuses it (an invalid token, a call decided
 * meanwhile).
 */
export async function decideApproval(
  client: Client,
  workflowId: string,
  options: DecideApprovalOptions,
): Promise<ApprovalRecord> {
  const secret = options.secret ?? process.env[APPROVAL_SECRET_ENV];
  if (secret === undefined || secret === '') {
    throw new ApprovalSecretMissingError(
      `No approval secret to sign the decision on tool call ${options.toolCallId} of workflow ${workflowId} with; nothing was sent. Pass secret, or set ${APPROVAL_SECRET_ENV} to the workers' secret.`,
    );
  }
  const pending = await listPendingApprovals(client, workflowId);
  const call = pending.find((p) => p.toolCallId === options.toolCallId);
  if (call === undefined) {
    const waiting = pending.map((p) => p.toolCallId).join(', ');
    throw new ApprovalNotPendingError(
      `Tool call ${options.toolCallId} of workflow ${workflowId} is not waiting for approval${waiting ? ` (waiting: ${waiting})` : ' (nothing is waiting)'}.`,
    );
  }
  const token = createApprovalToken(secret, approvalClaimsFor(call, options.approved));
  return client.workflow.getHandle(workflowId).executeUpdate(decideApprovalUpdate, {
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
