import { verifyApprovalToken } from '../src/approvals/approval-token.js';
import type { VerifyApprovalInput } from '../workflows/types.js';

/** Where workers find the approval secret when none is passed: this environment variable. */
export const APPROVAL_SECRET_ENV = 'CHAMVI_APPROVAL_SECRET';

/**
 * The approval-verification activity: checks a decision's token against the run, the call, its
 * effect key and the decision, with the secret only workers (and approvers) hold. It answers a
 * verdict rather than throwing, so a refused decision is never retried; without a secret every
 * decision is refused.
 */
export function createVerifyApprovalActivity(secret: string | Uint8Array | undefined) {
  return async function verifyApproval(input: VerifyApprovalInput): Promise<{ valid: boolean; problem?: string }> {
    const key = secret ?? process.env[APPROVAL_SECRET_ENV];
    if (key === undefined || key === '') {
      return {
        valid: false,
        problem: `this worker has no approval secret (pass approvalSecret or set ${APPROVAL_SECRET_ENV})`,
      };
    }
    const { token, ...claims } = input;
    return verifyApprovalToken(key, token, claims);
  };
}
