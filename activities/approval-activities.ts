import { verifyApprovalToken } from '../src/approvals/approval-token.js';
import { inputFingerprint } from '../src/effects/effect-key.js';
import type { ApprovalVerdict, VerifyApprovalInput } from '../common/index.js';

/** Where workers find the approval secret when none is passed: this environment variable. */
export const APPROVAL_SECRET_ENV = 'CHAMVI_APPROVAL_SECRET';

/**
 * The approval-verification activity: checks a decision's token against the run, the call, its
 * effect key, the fingerprint of the call's input (computed here from the input itself) and the
 * decision, with the secret only workers (and approvers) hold. It answers a verdict rather than
 * throwing, so a refused decision is never retried; without a secret every decision is refused.
 */
export function createVerifyApprovalActivity(secret: string | Uint8Array | undefined) {
  return async function verifyApproval(input: VerifyApprovalInput): Promise<ApprovalVerdict> {
    const key = secret ?? process.env[APPROVAL_SECRET_ENV];
    if (key === undefined || key === '') {
      return {
        valid: false,
        problem: `this worker has no approval secret (pass approvalSecret or set ${APPROVAL_SECRET_ENV})`,
      };
    }
    let fingerprint: string;
    try {
      fingerprint = inputFingerprint(input.input);
    } catch (error) {
      // An input without a faithful canonical form cannot be bound, so it cannot be approved.
      return {
        valid: false,
        problem: `the call's input cannot be fingerprinted (${error instanceof Error ? error.message : String(error)})`,
      };
    }
    return verifyApprovalToken(key, input.token, {
      runId: input.runId,
      toolCallId: input.toolCallId,
      key: input.key,
      fingerprint,
      approved: input.approved,
    });
  };
}
