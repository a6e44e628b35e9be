import { InvalidApprovalSecretError } from '../errors/errors.js';

/** Where workers and approvers find the approval secret when none is passed: this environment variable. */
export const APPROVAL_SECRET_ENV = 'CHAMVI_APPROVAL_SECRET';

/** The shortest approval secret accepted, in bytes (a string counts as its UTF-8 bytes). */
export const MIN_APPROVAL_SECRET_BYTES = 16;

/**
 * The approval secret as bytes.
 *
 * @param from where the secret came from, for the message (`approvalSecret`, `CHAMVI_APPROVAL_SECRET`).
 * @throws InvalidApprovalSecretError when it is shorter than {@link MIN_APPROVAL_SECRET_BYTES}.
 */
export function approvalSecretBytes(secret: string | Uint8Array, from = 'the approval secret'): Uint8Array {
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  if (!(bytes instanceof Uint8Array) || bytes.byteLength < MIN_APPROVAL_SECRET_BYTES) {
    const length = bytes instanceof Uint8Array ? `${bytes.byteLength} bytes long` : `a ${typeof secret}`;
    throw new InvalidApprovalSecretError(
      `${from} is ${length}; an approval secret must be at least ${MIN_APPROVAL_SECRET_BYTES} bytes, or tokens could be guessed. Use 32 random bytes, e.g. \`openssl rand -base64 32\`, and give every worker and approver the same one.`,
    );
  }
  return bytes;
}

/**
 * The secret a worker verifies approvals with: `secret`, else `CHAMVI_APPROVAL_SECRET`; `undefined`
 * when neither is set (or the variable is empty), and then every approval decision is refused.
 *
 * @throws InvalidApprovalSecretError when the secret found is shorter than 16 bytes.
 */
export function workerApprovalSecret(secret: string | Uint8Array | undefined): Uint8Array | undefined {
  if (secret !== undefined) return approvalSecretBytes(secret, 'approvalSecret');
  const fromEnv = process.env[APPROVAL_SECRET_ENV];
  if (fromEnv === undefined || fromEnv === '') return undefined;
  return approvalSecretBytes(fromEnv, APPROVAL_SECRET_ENV);
}
