import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * What an approval token is bound to: one decision on one tool call of one run, for exactly the
 * input the approver saw.
 */
export interface ApprovalClaims {
  /** The logical run id (`ctx.run.runId`). */
  readonly runId: string;
  /** The tool call the decision is for. */
  readonly toolCallId: string;
  /** The call's effect key (empty for a plain tool, which has none). */
  readonly key: string;
  /**
   * The call's input fingerprint: `inputFingerprint(input)`, the hex SHA-256 of its canonical JSON
   * (a pending approval lists it as `fingerprint`). A custom effect key may ignore part of the
   * input (a comment's body, say); the fingerprint does not, so a token approves exactly the input
   * it was minted for and no variant of it under the same key.
   */
  readonly fingerprint: string;
  /** The decision itself: a token minted to approve cannot deny, and the other way round. */
  readonly approved: boolean;
}

/** Why a token was refused, or that it is good. */
export type ApprovalTokenVerdict = { readonly valid: true } | { readonly valid: false; readonly problem: string };

const PREFIX = 'chamvi-approval.v2';
/** Tokens of 0.2 and earlier: bound to run, call, key and decision, not to the input. Refused. */
const OLD_PREFIXES = ['chamvi-approval.v1.'];

/** The approval secret as bytes; a secret shorter than 16 bytes is refused (it would be guessable). */
function secretBytes(secret: string | Uint8Array): Uint8Array {
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  if (bytes.byteLength < 16) {
    throw new TypeError('The approval secret must be at least 16 bytes long (32 random bytes are best).');
  }
  return bytes;
}

function sign(secret: string | Uint8Array, payload: string): Buffer {
  // The version is signed too, so a payload cannot be moved under another version's prefix.
  return createHmac('sha256', secretBytes(secret)).update(`${PREFIX}.${payload}`).digest();
}

function encodeClaims(claims: ApprovalClaims): string {
  // An array, not an object: one fixed field order, so the signed bytes are canonical.
  const body = [claims.runId, claims.toolCallId, claims.key, claims.fingerprint, claims.approved ? 'approve' : 'deny'];
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/**
 * Mints an approval token: `chamvi-approval.v2.<claims>.<HMAC-SHA256>` (both parts base64url),
 * where the claims are the run id, the tool call id, the effect key, the input fingerprint and the
 * decision. Whoever holds the secret (the workers, and the operators who answer approvals) can
 * mint one; nobody else can, and a token works for exactly the call, the input and the decision it
 * names. Take the claims from the pending approval (`{ ...pending, approved }`), or let
 * `decideApproval` / `chamvi approve` mint it.
 *
 * @throws TypeError when the secret is shorter than 16 bytes.
 */
export function createApprovalToken(secret: string | Uint8Array, claims: ApprovalClaims): string {
  const payload = encodeClaims(claims);
  return `${PREFIX}.${payload}.${sign(secret, payload).toString('base64url')}`;
}

/**
 * Checks an approval token against the call, input and decision it is offered for: the version,
 * the signature (constant-time), then every claim. A token of an older version
 * (`chamvi-approval.v1`, which did not bind the input) is refused: mint it again. Never throws for
 * a bad token; says what is wrong instead.
 *
 * @throws TypeError when the secret is shorter than 16 bytes.
 */
export function verifyApprovalToken(
  secret: string | Uint8Array,
  token: unknown,
  expected: ApprovalClaims,
): ApprovalTokenVerdict {
  const old = typeof token === 'string' ? OLD_PREFIXES.find((prefix) => token.startsWith(prefix)) : undefined;
  if (old !== undefined) {
    return {
      valid: false,
      problem: `the approval token was minted by an older version of @chamvi/temporal (${old.slice(0, -1)}, which does not bind the call's input) and is no longer accepted; mint it again for the pending call (decideApproval, chamvi approve, or createApprovalToken with the pending approval's fingerprint)`,
    };
  }
  if (typeof token !== 'string' || !token.startsWith(`${PREFIX}.`)) {
    return { valid: false, problem: `not a chamvi approval token (expected ${PREFIX}.<claims>.<signature>)` };
  }
  const [payload, signature, ...rest] = token.slice(PREFIX.length + 1).split('.');
  if (payload === undefined || signature === undefined || rest.length > 0) {
    return { valid: false, problem: 'malformed approval token' };
  }
  const given = Buffer.from(signature, 'base64url');
  const wanted = sign(secret, payload);
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
    return { valid: false, problem: 'the approval token is not signed with this worker’s approval secret' };
  }
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { valid: false, problem: 'malformed approval token claims' };
  }
  const [runId, toolCallId, key, fingerprint, decision, ...extra] = Array.isArray(claims) ? (claims as unknown[]) : [];
  if (extra.length > 0) return { valid: false, problem: 'malformed approval token claims' };
  if (runId !== expected.runId) return { valid: false, problem: 'the approval token was minted for another run' };
  if (toolCallId !== expected.toolCallId)
    return { valid: false, problem: 'the approval token was minted for another tool call' };
  if (key !== expected.key) return { valid: false, problem: 'the approval token was minted for another effect key' };
  if (fingerprint !== expected.fingerprint) {
    return {
      valid: false,
      problem:
        'the approval token was minted for another input of this call (its input fingerprint differs: the input is not the one that was approved)',
    };
  }
  if (decision !== (expected.approved ? 'approve' : 'deny')) {
    return {
      valid: false,
      problem: `the approval token was minted to ${String(decision)}, not to ${expected.approved ? 'approve' : 'deny'}`,
    };
  }
  return { valid: true };
}
