import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  APPROVAL_TOKEN_VERSION,
  approvalClaimsProblem,
  encodeApprovalClaims,
  readApprovalToken,
  toBase64Url,
  type ApprovalClaims,
} from './approval-token-format.js';
import { InvalidApprovalClaimsError } from '../errors/errors.js';
import { approvalSecretBytes } from './approval-secret.js';

export type { ApprovalClaims } from './approval-token-format.js';

/** Why a token was refused, or that it is good. */
export type ApprovalTokenVerdict = { readonly valid: true } | { readonly valid: false; readonly problem: string };

/** What {@link verifyApprovalToken} takes besides the token and the claims it must carry. */
export interface VerifyApprovalTokenOptions {
  /** The time the token's `expiresAt` is checked against, in ms since the epoch. Default `Date.now()`. */
  readonly now?: number;
  /**
   * `false` skips the expiry: for a decision the run accepted already, checked again where the
   * call runs (its retries may come after the deadline). Default `true`.
   */
  readonly checkExpiry?: boolean;
}

function sign(secret: Uint8Array, payload: string): Buffer {
  // The version is signed too, so a payload cannot be moved under another version's prefix.
  return createHmac('sha256', secret).update(`${APPROVAL_TOKEN_VERSION}.${payload}`).digest();
}

/**
 * Mints an approval token: `chamvi-approval.v3.<claims>.<HMAC-SHA256>` (both parts base64url),
 * where the claims are the run id, the tool call id, the effect key, the input fingerprint, the
 * pending request's nonce, the decision and, when given, `expiresAt`. Whoever holds the secret
 * (the workers, and the operators who answer approvals) can mint one; nobody else can, and a token
 * works for exactly the request, the input and the decision it names, until `expiresAt` if set.
 * Take the claims from the pending approval (`approvalClaimsFor(pending, approved)`), or let
 * `decideApproval` / `chamvi approve` mint it.
 *
 * @throws InvalidApprovalSecretError when the secret is shorter than 16 bytes.
 * @throws InvalidApprovalClaimsError when a claim has the wrong type, or `expiresAt` is not a finite number.
 * @public
 */
export function createApprovalToken(secret: string | Uint8Array, claims: ApprovalClaims): string {
  const key = approvalSecretBytes(secret);
  const strings = {
    runId: claims.runId,
    toolCallId: claims.toolCallId,
    key: claims.key,
    fingerprint: claims.fingerprint,
    nonce: claims.nonce,
  };
  for (const [name, value] of Object.entries(strings)) {
    if (typeof value !== 'string') {
      throw new InvalidApprovalClaimsError(
        `createApprovalToken: claim ${name} is ${value === null ? 'null' : typeof value}, not a string. Take the claims from the pending approval: approvalClaimsFor(pending, approved).`,
      );
    }
  }
  if (typeof claims.approved !== 'boolean') {
    throw new InvalidApprovalClaimsError(
      `createApprovalToken: claim approved must be true or false (got ${typeof claims.approved}).`,
    );
  }
  if (claims.expiresAt !== undefined && !(typeof claims.expiresAt === 'number' && Number.isFinite(claims.expiresAt))) {
    throw new InvalidApprovalClaimsError(
      `createApprovalToken: expiresAt is ${String(claims.expiresAt)}; it must be a finite number of ms since the Unix epoch (Date.now() + ttlMs), or absent for a token without expiry.`,
    );
  }
  const payload = encodeApprovalClaims(claims);
  return `${APPROVAL_TOKEN_VERSION}.${payload}.${toBase64Url(sign(key, payload))}`;
}

/**
 * Checks an approval token against the request, input and decision it is offered for: the
 * version, the signature (constant-time), every claim, then the expiry. A token of an older
 * version (`chamvi-approval.v1`, which did not bind the input; `v2`, which did not bind the
 * request) is refused: mint it again. Never throws for a bad token; says what is wrong instead.
 *
 * @throws InvalidApprovalSecretError when the secret is shorter than 16 bytes.
 */
export function verifyApprovalToken(
  secret: string | Uint8Array,
  token: unknown,
  expected: Omit<ApprovalClaims, 'expiresAt'>,
  options: VerifyApprovalTokenOptions = {},
): ApprovalTokenVerdict {
  const key = approvalSecretBytes(secret);
  const read = readApprovalToken(token);
  if (!read.ok) return { valid: false, problem: read.problem };
  const wanted = sign(key, read.payload);
  if (!timingSafeEqual(read.signature, wanted)) {
    return { valid: false, problem: 'the approval token is not signed with this worker’s approval secret' };
  }
  const problem = approvalClaimsProblem(read.claims, expected);
  if (problem !== undefined) return { valid: false, problem };
  const { expiresAt } = read.claims;
  const now = options.now ?? Date.now();
  if (options.checkExpiry !== false && expiresAt !== undefined && now >= expiresAt) {
    return {
      valid: false,
      problem: `the approval token expired at ${instant(expiresAt)}; mint a new one for the pending request`,
    };
  }
  return { valid: true };
}

/** An expiry as ISO 8601, or as ms when no date has it (claims may carry any finite number). */
function instant(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms} ms since the epoch` : date.toISOString();
}
