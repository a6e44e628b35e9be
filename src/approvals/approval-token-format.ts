// The approval token's format and claims, without the signature. Sandbox-safe (no Node, no
// imports; a lint rule and the workflow bundle test hold it to that), so the approval gate's
// validator reads tokens with the same code as the workers that verify them, and refuses a token
// that cannot be the pending call's before anything reaches the history.

/**
 * What an approval token is bound to: one decision on one request of one tool call of one run,
 * for exactly the input the approver saw, optionally until a deadline.
 * @public
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
  /**
   * The pending request's nonce (a pending approval lists it as `nonce`): the run draws a new one
   * each time a call asks for a decision, so a token answers that one request and no later call
   * with the same call id and input (the next step's, a reset run's).
   */
  readonly nonce: string;
  /** The decision itself: a token minted to approve cannot deny, and the other way round. */
  readonly approved: boolean;
  /**
   * Optional deadline, in ms since the Unix epoch: the worker that verifies the decision refuses
   * the token from then on (by its own clock). For a token handed to someone to send later.
   */
  readonly expiresAt?: number;
}

/** The version prefix of the tokens this library mints and accepts. */
export const APPROVAL_TOKEN_VERSION = 'chamvi-approval.v3';

/** Versions minted by older releases, refused with what they lacked. */
const RETIRED_VERSIONS: ReadonlyArray<readonly [prefix: string, lacks: string]> = [
  ['chamvi-approval.v1', "which does not bind the call's input"],
  [
    'chamvi-approval.v2',
    'which does not bind the pending request, so it would also approve a later call with the same id and input',
  ],
];

/** Tokens longer than this are refused unread (a v3 token of ordinary claims is a few hundred characters). */
export const MAX_APPROVAL_TOKEN_LENGTH = 8192;

/** Bytes of an HMAC-SHA256 signature. */
const SIGNATURE_BYTES = 32;

/** A token read without its signature checked: the signed payload, the signature and the claims. */
export type ReadApprovalToken =
  | { readonly ok: true; readonly payload: string; readonly signature: Uint8Array; readonly claims: ApprovalClaims }
  | { readonly ok: false; readonly problem: string };

/** The claims as the token carries them: base64url of a JSON array in one fixed order, so the signed bytes are canonical. */
export function encodeApprovalClaims(claims: ApprovalClaims): string {
  const body: unknown[] = [
    claims.runId,
    claims.toolCallId,
    claims.key,
    claims.fingerprint,
    claims.nonce,
    claims.approved ? 'approve' : 'deny',
  ];
  if (claims.expiresAt !== undefined) body.push(claims.expiresAt);
  return toBase64Url(new TextEncoder().encode(JSON.stringify(body)));
}

/**
 * Reads `chamvi-approval.v3.<claims>.<signature>` without checking the signature: what a token
 * claims, or why it is not a token this version accepts (another or an older version, a
 * malformed part, claims of the wrong shape). Never throws.
 */
export function readApprovalToken(token: unknown): ReadApprovalToken {
  if (typeof token !== 'string') return refused('an approval token is a string');
  if (token.length > MAX_APPROVAL_TOKEN_LENGTH) {
    return refused(
      `the approval token is ${token.length} characters long, more than any token (${MAX_APPROVAL_TOKEN_LENGTH})`,
    );
  }
  const retired = RETIRED_VERSIONS.find(([prefix]) => token.startsWith(`${prefix}.`));
  if (retired !== undefined) {
    return refused(
      `the approval token was minted by an older version of @chamvi/temporal (${retired[0]}, ${retired[1]}) and is no longer accepted; mint it again for the pending call (decideApproval, chamvi approve, or createApprovalToken with approvalClaimsFor(pending))`,
    );
  }
  if (!token.startsWith(`${APPROVAL_TOKEN_VERSION}.`)) {
    return refused(`not a chamvi approval token (expected ${APPROVAL_TOKEN_VERSION}.<claims>.<signature>)`);
  }
  const [payload, signed, ...rest] = token.slice(APPROVAL_TOKEN_VERSION.length + 1).split('.');
  const signature = signed === undefined ? undefined : fromBase64Url(signed);
  if (payload === undefined || signature?.length !== SIGNATURE_BYTES || rest.length > 0) {
    return refused('malformed approval token');
  }
  const claims = decodeClaims(payload);
  return claims === undefined ? refused('malformed approval token claims') : { ok: true, payload, signature, claims };
}

/**
 * Why `claims` are not the expected ones (the first claim that differs), or `undefined` when they
 * match. The expiry is not compared: the verifying worker checks it against its clock.
 */
export function approvalClaimsProblem(
  claims: ApprovalClaims,
  expected: Omit<ApprovalClaims, 'expiresAt'>,
): string | undefined {
  if (claims.runId !== expected.runId) return 'the approval token was minted for another run';
  if (claims.toolCallId !== expected.toolCallId) return 'the approval token was minted for another tool call';
  if (claims.key !== expected.key) return 'the approval token was minted for another effect key';
  if (claims.fingerprint !== expected.fingerprint) {
    return 'the approval token was minted for another input of this call (its input fingerprint differs: the input is not the one that was approved)';
  }
  if (claims.nonce !== expected.nonce) {
    return "the approval token was minted for another request of this call (another step's, or a run reset since: the call asks anew each time); mint it for the pending request and its nonce";
  }
  if (claims.approved !== expected.approved) {
    return `the approval token was minted to ${claims.approved ? 'approve' : 'deny'}, not to ${expected.approved ? 'approve' : 'deny'}`;
  }
  return undefined;
}

function decodeClaims(payload: string): ApprovalClaims | undefined {
  const bytes = fromBase64Url(payload);
  if (bytes === undefined) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
  if (!Array.isArray(body) || (body.length !== 6 && body.length !== 7)) return undefined;
  const [runId, toolCallId, key, fingerprint, nonce, decision, expiresAt] = body as unknown[];
  const strings = [runId, toolCallId, key, fingerprint, nonce];
  if (!strings.every((value) => typeof value === 'string')) return undefined;
  if (decision !== 'approve' && decision !== 'deny') return undefined;
  if (body.length === 7 && !(typeof expiresAt === 'number' && Number.isFinite(expiresAt))) return undefined;
  return {
    runId: runId as string,
    toolCallId: toolCallId as string,
    key: key as string,
    fingerprint: fingerprint as string,
    nonce: nonce as string,
    approved: decision === 'approve',
    ...(body.length === 7 ? { expiresAt: expiresAt as number } : {}),
  };
}

function refused(problem: string): ReadApprovalToken {
  return { ok: false, problem };
}

// Base64url (RFC 4648 §5, no padding) in plain code: workflow code has no Buffer.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const VALUES: ReadonlyMap<string, number> = new Map([...ALPHABET].map((char, value) => [char, value]));

/** The bytes as base64url, without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a = 0, b = 0, c = 0] = [bytes[i], bytes[i + 1], bytes[i + 2]];
    const chunk = (a << 16) | (b << 8) | c;
    const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let j = 0; j < chars; j++) out += ALPHABET[(chunk >> (18 - 6 * j)) & 63];
  }
  return out;
}

/**
 * The bytes of a base64url string (no padding), or `undefined` when it is not one: a character
 * outside the alphabet, padding, or a length no encoding has.
 */
export function fromBase64Url(text: string): Uint8Array | undefined {
  if (text.length % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((text.length * 6) / 8));
  let bits = 0;
  let value = 0;
  let at = 0;
  for (const char of text) {
    const digit = VALUES.get(char);
    if (digit === undefined) return undefined;
    value = ((value << 6) | digit) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (value >> bits) & 0xff;
    }
  }
  return out;
}
