import { APPROVAL_SECRET_ENV, workerApprovalSecret } from '../src/approvals/approval-secret.js';
import { verifyApprovalToken } from '../src/approvals/approval-token.js';
import { inputFingerprint } from '../src/effects/effect-key.js';
import type { ApprovalVerdict, VerifyApprovalInput } from '../common/index.js';

export { APPROVAL_SECRET_ENV } from '../src/approvals/approval-secret.js';

/**
 * The approval-verification activity: checks a decision's token against the run, the call, its
 * effect key, the fingerprint of the call's input (computed here from the input itself), the
 * pending request's nonce, the decision and the token's expiry (by this worker's clock), with the
 * secret only workers (and approvers) hold. It answers a verdict for anything it cannot verify,
 * and never throws, so a refused decision is never retried; without a secret every decision is
 * refused.
 *
 * The secret (`secret`, else `CHAMVI_APPROVAL_SECRET`) is read and checked once, here, when the
 * worker's activities are created.
 *
 * @throws InvalidApprovalSecretError (when called, not when the activity runs) for a secret under 16 bytes.
 */
export function createVerifyApprovalActivity(secret: string | Uint8Array | undefined) {
  const key = workerApprovalSecret(secret);
  return async function verifyApproval(input: VerifyApprovalInput): Promise<ApprovalVerdict> {
    if (key === undefined) {
      return {
        valid: false,
        problem: `this worker has no approval secret (pass approvalSecret or set ${APPROVAL_SECRET_ENV})`,
      };
    }
    try {
      let fingerprint: string;
      try {
        fingerprint = inputFingerprint(input.input);
      } catch (error) {
        // An input without a faithful canonical form cannot be bound, so it cannot be approved.
        return { valid: false, problem: `the call's input cannot be fingerprinted (${messageOf(error)})` };
      }
      return verifyApprovalToken(key, input.token, {
        runId: input.runId,
        toolCallId: input.toolCallId,
        key: input.key,
        fingerprint,
        nonce: input.nonce,
        approved: input.approved,
      });
    } catch (error) {
      return { valid: false, problem: `the approval could not be verified (${messageOf(error)})` };
    }
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
