import { describe, expect, it } from '@jest/globals';
import { tool } from 'ai';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { z } from 'zod';
import { fromBase64Url, readApprovalToken, toBase64Url } from '../../src/approvals/approval-token-format.js';
import { defineEffectTool, inputFingerprint } from '../../src/index.js';
import { InvalidApprovalClaimsError, InvalidApprovalSecretError } from '../../src/errors/errors.js';
import { createApprovalToken, verifyApprovalToken } from '../../src/approvals/approval-token.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { resolveApproval } from '../../src/approvals/approval-policy.js';

const SECRET = 'unit-test-approval-secret-0123456789';
const approvedInput = { issue: 7, body: 'Thanks!' };
const claims = {
  runId: 'run-1',
  toolCallId: 'call-1',
  key: 'run-1:comment:7',
  fingerprint: inputFingerprint(approvedInput),
  nonce: 'c0ffee00-0000-4000-8000-000000000001',
  approved: true,
};

describe('approval tokens', () => {
  it('verify for exactly the run, call, key, input fingerprint and decision they were minted for', () => {
    const token = createApprovalToken(SECRET, claims);
    expect(token).toMatch(/^chamvi-approval\.v3\.[\w-]+\.[\w-]+$/);
    expect(verifyApprovalToken(SECRET, token, claims)).toEqual({ valid: true });
    expect(verifyApprovalToken(SECRET, token, { ...claims, runId: 'run-2' })).toMatchObject({ valid: false });
    expect(verifyApprovalToken(SECRET, token, { ...claims, toolCallId: 'call-2' })).toMatchObject({ valid: false });
    expect(verifyApprovalToken(SECRET, token, { ...claims, key: 'run-1:comment:8' })).toMatchObject({ valid: false });
    expect(verifyApprovalToken(SECRET, token, { ...claims, approved: false })).toMatchObject({ valid: false });
    // Same key (the comment key ignores the body), another body: another input, refused.
    const altered = { ...claims, fingerprint: inputFingerprint({ ...approvedInput, body: 'Altered.' }) };
    expect(verifyApprovalToken(SECRET, token, altered)).toEqual({
      valid: false,
      problem: expect.stringContaining('minted for another input of this call'),
    });
    expect(verifyApprovalToken('another-secret-of-enough-length', token, claims)).toMatchObject({ valid: false });
  });

  it('refuse tampered claims, garbage and short secrets', () => {
    const token = createApprovalToken(SECRET, claims);
    const [prefix, version, , signature] = token.split('.');
    const forgedClaims = Buffer.from(
      JSON.stringify(['run-1', 'call-1', 'run-1:comment:7', claims.fingerprint, claims.nonce, 'approve', 1e15]),
    ).toString('base64url');
    expect(verifyApprovalToken(SECRET, `${prefix}.${version}.${forgedClaims}.${signature}`, claims)).toMatchObject({
      valid: false,
    });
    expect(verifyApprovalToken(SECRET, undefined, claims)).toMatchObject({ valid: false });
    expect(verifyApprovalToken(SECRET, `${token}.extra`, claims)).toMatchObject({ valid: false });
    expect(() => createApprovalToken('short', claims)).toThrow(/16 bytes/);
  });

  it('a token names the pending request: minted for one nonce, it does not answer another request of the same call and input', () => {
    const token = createApprovalToken(SECRET, claims);
    expect(verifyApprovalToken(SECRET, token, { ...claims, nonce: 'c0ffee00-0000-4000-8000-000000000002' })).toEqual({
      valid: false,
      problem: expect.stringContaining('minted for another request of this call'),
    });
  });

  it('a token with expiresAt is refused from then on, by the clock of the worker that checks it (or not, when told to skip it)', () => {
    const expiresAt = Date.parse('2030-01-01T00:00:00Z');
    const token = createApprovalToken(SECRET, { ...claims, expiresAt });
    expect(verifyApprovalToken(SECRET, token, claims, { now: expiresAt - 1 })).toEqual({ valid: true });
    expect(verifyApprovalToken(SECRET, token, claims, { now: expiresAt })).toEqual({
      valid: false,
      problem: 'the approval token expired at 2030-01-01T00:00:00.000Z; mint a new one for the pending request',
    });
    expect(verifyApprovalToken(SECRET, token, claims, { now: expiresAt + 1, checkExpiry: false })).toEqual({
      valid: true,
    });
    const stale = createApprovalToken(SECRET, { ...claims, expiresAt: Date.now() - 1000 });
    expect(verifyApprovalToken(SECRET, stale, claims)).toMatchObject({
      valid: false,
      problem: expect.stringContaining('expired'),
    });
  });

  it('a secret under 16 bytes or unsignable claims fail with named errors that say what to do', () => {
    const fifteen = 'fifteen-bytes!!';
    expect(new TextEncoder().encode(fifteen).byteLength).toBe(15);
    expect(() => createApprovalToken(fifteen, claims)).toThrow(
      expect.objectContaining({
        name: 'InvalidApprovalSecretError',
        retryable: false,
        message: expect.stringMatching(
          /15 bytes long; an approval secret must be at least 16 bytes.*openssl rand -base64 32/,
        ),
      }),
    );
    expect(() => verifyApprovalToken(new Uint8Array(15), 'x', claims)).toThrow(InvalidApprovalSecretError);
    for (const expiresAt of [Number.NaN, Infinity]) {
      expect(() => createApprovalToken(SECRET, { ...claims, expiresAt })).toThrow(
        expect.objectContaining({
          name: 'InvalidApprovalClaimsError',
          message: expect.stringContaining('expiresAt is'),
        }),
      );
    }
    expect(() => createApprovalToken(SECRET, { ...claims, nonce: undefined as unknown as string })).toThrow(
      InvalidApprovalClaimsError,
    );
  });

  it('reading a token without the secret (as workflow code does) agrees with the signed check, and never throws', () => {
    const token = createApprovalToken(SECRET, { ...claims, expiresAt: 1_900_000_000_000 });
    expect(readApprovalToken(token)).toMatchObject({ ok: true, claims: { ...claims, expiresAt: 1_900_000_000_000 } });
    const [, , payload, signature] = token.split('.');
    const garbage = [
      undefined,
      42,
      '',
      'let-me-in',
      'x'.repeat(10_000),
      `chamvi-approval.v3.${payload}`,
      `chamvi-approval.v3.${payload}.${signature}.x`,
      `chamvi-approval.v3.${payload}.${signature?.slice(1)}`,
      `chamvi-approval.v3.${payload}!.${signature}`,
      `chamvi-approval.v3.${Buffer.from('[1,2,3,4,5,"approve"]').toString('base64url')}.${signature}`,
      `chamvi-approval.v3.${Buffer.from('{"runId":"run-1"}').toString('base64url')}.${signature}`,
      `chamvi-approval.v3.${Buffer.from([0xff, 0xfe, 0x5b]).toString('base64url')}.${signature}`,
    ];
    for (const value of garbage) {
      expect(readApprovalToken(value)).toMatchObject({ ok: false, problem: expect.any(String) });
      expect(verifyApprovalToken(SECRET, value, claims)).toMatchObject({ valid: false, problem: expect.any(String) });
    }
  });

  it("base64url of the token format is Node's, byte for byte, and refuses what is not base64url", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const encoded = toBase64Url(bytes);
        expect(encoded).toBe(Buffer.from(bytes).toString('base64url'));
        expect(fromBase64Url(encoded)).toEqual(bytes);
      }),
    );
    for (const bad of ['a', 'ab=c', 'a+bc', 'a/bc', 'abcde', 'ab c']) expect(fromBase64Url(bad)).toBeUndefined();
  });
});

describe('approval tokens of older versions', () => {
  it('a v1 token (bound to run, call, key and decision, not the input) is refused: minted by an older version, mint it again', () => {
    // A genuine v1 token, signed as the v1 format signs it, with the workers' own secret.
    const payload = Buffer.from(JSON.stringify(['run-1', 'call-1', 'run-1:comment:7', 'approve'])).toString(
      'base64url',
    );
    const signature = createHmac('sha256', SECRET).update(`chamvi-approval.v1.${payload}`).digest('base64url');
    const verdict = verifyApprovalToken(SECRET, `chamvi-approval.v1.${payload}.${signature}`, claims);
    expect(verdict).toEqual({ valid: false, problem: expect.stringContaining('minted by an older version') });
    expect(verdict).toEqual({ valid: false, problem: expect.stringContaining('mint it again') });
    // Its payload and signature moved under the v3 prefix: the version is signed, so refused.
    expect(verifyApprovalToken(SECRET, `chamvi-approval.v3.${payload}.${signature}`, claims)).toMatchObject({
      valid: false,
    });
  });

  it('a v2 token (not bound to the pending request) is refused: minted by an older version, mint it again', () => {
    const payload = Buffer.from(
      JSON.stringify(['run-1', 'call-1', 'run-1:comment:7', claims.fingerprint, 'approve']),
    ).toString('base64url');
    const signature = createHmac('sha256', SECRET).update(`chamvi-approval.v2.${payload}`).digest('base64url');
    const verdict = verifyApprovalToken(SECRET, `chamvi-approval.v2.${payload}.${signature}`, claims);
    expect(verdict).toEqual({ valid: false, problem: expect.stringContaining('does not bind the pending request') });
    expect(verdict).toEqual({ valid: false, problem: expect.stringContaining('mint it again') });
  });
});

describe('approval policy (AI SDK 7 naming)', () => {
  const ctx = createToolContext({ runId: 'run-1', agent: 'a', state: { trusted: ['main'] } });
  const call = (input: unknown) => ({ toolCallId: 'c1', toolName: 'push', input });
  const push = defineEffectTool({
    inputSchema: z.object({ branch: z.string() }),
    // per call: pushes to branches outside the run's trusted list need a person
    needsApproval: async ({ branch }, { context }) => !(context.state['trusted'] as string[]).includes(branch),
    execute: async () => 'pushed',
  });

  it("follows the tool's needsApproval (boolean or a function of input and context)", async () => {
    expect(await resolveApproval(push, call({ branch: 'main' }), ctx, [])).toEqual({ status: 'not-applicable' });
    expect(await resolveApproval(push, call({ branch: 'release' }), ctx, [])).toEqual({ status: 'user-approval' });
    const always = tool({ inputSchema: z.object({}), needsApproval: true, execute: async () => 1 });
    expect(await resolveApproval(always, call({}), ctx, [])).toEqual({ status: 'user-approval' });
  });

  it("lets the registration's toolApproval decide first, with statuses and reasons", async () => {
    const settings = {
      push: (input: { branch: string }) =>
        input.branch === 'prod' ? ({ type: 'denied', reason: 'never from an agent' } as const) : undefined,
    };
    expect(await resolveApproval(push, call({ branch: 'prod' }), ctx, [], settings)).toEqual({
      status: 'denied',
      reason: 'never from an agent',
    });
    // undefined from the registration: the tool's own rule applies
    expect(await resolveApproval(push, call({ branch: 'release' }), ctx, [], settings)).toEqual({
      status: 'user-approval',
    });
    expect(await resolveApproval(push, call({ branch: 'release' }), ctx, [], { push: 'approved' })).toEqual({
      status: 'approved',
    });
    const generic = ({ toolCall }: { toolCall: { toolName: string } }) =>
      toolCall.toolName === 'push' ? ({ type: 'user-approval', reason: 'pushes are reviewed' } as const) : undefined;
    expect(await resolveApproval(push, call({ branch: 'main' }), ctx, [], generic)).toEqual({
      status: 'user-approval',
      reason: 'pushes are reviewed',
    });
  });
});
