import { describe, expect, it } from '@jest/globals';
import { tool } from 'ai';
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import {
  createApprovalToken,
  createToolContext,
  defineEffectTool,
  inputFingerprint,
  resolveApproval,
  verifyApprovalToken,
} from '../../src/index.js';

const SECRET = 'unit-test-approval-secret-0123456789';
const approvedInput = { issue: 7, body: 'Thanks!' };
const claims = {
  runId: 'run-1',
  toolCallId: 'call-1',
  key: 'run-1:comment:7',
  fingerprint: inputFingerprint(approvedInput),
  approved: true,
};

describe('approval tokens', () => {
  it('verify for exactly the run, call, key, input fingerprint and decision they were minted for', () => {
    const token = createApprovalToken(SECRET, claims);
    expect(token).toMatch(/^chamvi-approval\.v2\.[\w-]+\.[\w-]+$/);
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
      JSON.stringify(['run-1', 'call-1', 'run-1:comment:7', claims.fingerprint, 'approve', 'x']),
    ).toString('base64url');
    expect(verifyApprovalToken(SECRET, `${prefix}.${version}.${forgedClaims}.${signature}`, claims)).toMatchObject({
      valid: false,
    });
    expect(verifyApprovalToken(SECRET, undefined, claims)).toMatchObject({ valid: false });
    expect(verifyApprovalToken(SECRET, `${token}.extra`, claims)).toMatchObject({ valid: false });
    expect(() => createApprovalToken('short', claims)).toThrow(/16 bytes/);
  });
});

describe('approval tokens of older versions', () => {
  it('a v1 token (bound to run, call, key and decision, not the input) is refused: minted by an older version, mint it again', () => {
    // A genuine v1 token, signed as 0.2 signed it, with the workers' own secret.
    const payload = Buffer.from(JSON.stringify(['run-1', 'call-1', 'run-1:comment:7', 'approve'])).toString(
      'base64url',
    );
    const signature = createHmac('sha256', SECRET).update(`chamvi-approval.v1.${payload}`).digest('base64url');
    const verdict = verifyApprovalToken(SECRET, `chamvi-approval.v1.${payload}.${signature}`, claims);
    expect(verdict).toEqual({ valid: false, problem: expect.stringContaining('minted by an older version') });
    expect(verdict).toEqual({ valid: false, problem: expect.stringContaining('mint it again') });
    // Its payload and signature moved under the v2 prefix: the version is signed, so refused.
    expect(verifyApprovalToken(SECRET, `chamvi-approval.v2.${payload}.${signature}`, claims)).toEqual({
      valid: false,
      problem: expect.stringContaining('not signed'),
    });
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
