import { describe, expect, it } from '@jest/globals';
import { tool } from 'ai';
import { z } from 'zod';
import {
  createApprovalToken,
  createToolContext,
  defineEffectTool,
  resolveApproval,
  verifyApprovalToken,
} from '../../src/index.js';

const SECRET = 'unit-test-approval-secret-0123456789';
const claims = { runId: 'run-1', toolCallId: 'call-1', key: 'run-1:comment:7', approved: true };

describe('approval tokens', () => {
  it('verify for exactly the run, call, key and decision they were minted for', () => {
    const token = createApprovalToken(SECRET, claims);
    expect(token).toMatch(/^chamvi-approval\.v1\.[\w-]+\.[\w-]+$/);
    expect(verifyApprovalToken(SECRET, token, claims)).toEqual({ valid: true });
    expect(verifyApprovalToken(SECRET, token, { ...claims, runId: 'run-2' })).toMatchObject({ valid: false });
    expect(verifyApprovalToken(SECRET, token, { ...claims, toolCallId: 'call-2' })).toMatchObject({ valid: false });
    expect(verifyApprovalToken(SECRET, token, { ...claims, key: 'run-1:comment:8' })).toMatchObject({ valid: false });
    expect(verifyApprovalToken(SECRET, token, { ...claims, approved: false })).toMatchObject({ valid: false });
    expect(verifyApprovalToken('another-secret-of-enough-length', token, claims)).toMatchObject({ valid: false });
  });

  it('refuse tampered claims, garbage and short secrets', () => {
    const token = createApprovalToken(SECRET, claims);
    const [prefix, version, , signature] = token.split('.');
    const forgedClaims = Buffer.from(JSON.stringify(['run-1', 'call-1', 'run-1:comment:7', 'approve', 'x'])).toString(
      'base64url',
    );
    expect(verifyApprovalToken(SECRET, `${prefix}.${version}.${forgedClaims}.${signature}`, claims)).toMatchObject({
      valid: false,
    });
    expect(verifyApprovalToken(SECRET, undefined, claims)).toMatchObject({ valid: false });
    expect(verifyApprovalToken(SECRET, `${token}.extra`, claims)).toMatchObject({ valid: false });
    expect(() => createApprovalToken('short', claims)).toThrow(/16 bytes/);
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
