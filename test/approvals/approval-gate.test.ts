// The approval gate under hostile or broken input, on the Temporal dev server: unlike the
// time-skipping test server, it writes nothing to the history for an update its validator
// rejects, as production servers do, so history growth is measured as it would be.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError, type ApplicationFailure, type WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkerOptions, WorkflowBundle } from '@temporalio/worker';
import { tool } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { createVerifyApprovalActivity } from '../../activities/approval-activities.js';
import { APPROVAL_TOKEN_VERSION } from '../../src/approvals/approval-token-format.js';
import { scriptedModel, type ScriptedStep } from '../../testing/scripted-model.js';
import { defineAgent, inputFingerprint } from '../../src/index.js';
import { createApprovalToken } from '../../src/approvals/approval-token.js';
import { InvalidApprovalSecretError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { chamviPlugin, createAgentWorker } from '../../worker/index.js';
import { approvalClaimsFor, decideApproval, listPendingApprovals } from '../../client/approvals-client.js';
import { decideApprovalUpdate } from '../../common/approval-handlers.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import type { PendingApproval } from '../../common/approval-types.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import type { duplicateApprovalWorkflow } from '../fixtures/workflows.js';

const SECRET = 'approval-secret-for-tests-0123456789';
const FIFTEEN_BYTES = 'fifteen-bytes!!';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** An agent whose plain `deploy` tool needs approval; `deployed` lists what ran. */
function deployer(script: ScriptedStep[], needsApproval = true) {
  const deployed: string[] = [];
  const deploy = tool({
    description: 'Deploys the service to an environment.',
    inputSchema: z.object({ env: z.string() }),
    needsApproval,
    execute: ({ env: target }) => {
      deployed.push(target);
      return Promise.resolve(`deployed to ${target}`);
    },
  });
  const agent = defineAgent({ name: 'deployer', model: scriptedModel(script), tools: { deploy } });
  return { agent, deployed };
}

const deployCall = (target: string, toolCallId?: string) => ({
  toolName: 'deploy',
  input: { env: target },
  ...(toolCallId !== undefined ? { toolCallId } : {}),
});

async function withWorker<T>(
  agent: ReturnType<typeof deployer>['agent'],
  body: (taskQueue: string) => Promise<T>,
  workerOptions: Partial<WorkerOptions> = {},
): Promise<T> {
  const taskQueue = `q-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [{ agent }],
    store: new MemoryEffectStore(),
    approvalSecret: SECRET,
    workerOptions: { workflowBundle: bundle, ...workerOptions },
  });
  return worker.runUntil(body(taskQueue));
}

/** The run's pending approval once it asks (of `step`, when given). */
async function pendingOf(handle: WorkflowHandle, step?: number): Promise<PendingApproval> {
  const until = Date.now() + 20_000;
  for (;;) {
    const pending = await listPendingApprovals(env.client, handle.workflowId).catch(() => []);
    const found = pending.find((p) => step === undefined || p.step === step);
    if (found !== undefined) return found;
    if (Date.now() > until)
      throw new Error(`no pending approval${step === undefined ? '' : ` of step ${step}`} in time`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Sends a decision by update; rejects with the refusal's own message. */
function send(handle: WorkflowHandle, decision: { toolCallId: string; approved: boolean; token: string }) {
  return handle.executeUpdate(decideApprovalUpdate, { args: [decision] }).catch((error: unknown) => {
    const cause = (error as { cause?: Error }).cause;
    throw new Error(`${(error as Error).message}: ${cause?.message ?? ''}`);
  });
}

/** Settles within `ms`, or fails saying what did not happen. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function historyOf(handle: WorkflowHandle) {
  const events = (await handle.fetchHistory()).events ?? [];
  const verifications = events.filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'chamvi.verifyApproval',
  ).length;
  return { events: events.length, verifications };
}

describe('a short approval secret', () => {
  it('a worker or plugin given an approval secret under 16 bytes is not created: InvalidApprovalSecretError says the minimum and how to make one', async () => {
    const { agent } = deployer([]);
    const refusal = expect.objectContaining({
      name: 'InvalidApprovalSecretError',
      retryable: false,
      message: expect.stringMatching(/^approvalSecret is 15 bytes long; .* at least 16 bytes.*openssl rand -base64 32/),
    });
    await expect(
      createAgentWorker({
        connection: env.nativeConnection,
        taskQueue: `q-${randomUUID()}`,
        agents: [{ agent }],
        store: new MemoryEffectStore(),
        approvalSecret: FIFTEEN_BYTES,
        workerOptions: { workflowBundle: bundle },
      }),
    ).rejects.toEqual(refusal);
    expect(() =>
      chamviPlugin({ agents: [{ agent }], store: new MemoryEffectStore(), approvalSecret: FIFTEEN_BYTES }),
    ).toThrow(refusal);
    expect(() =>
      chamviPlugin({ agents: [{ agent }], store: new MemoryEffectStore(), approvalSecret: new Uint8Array(15) }),
    ).toThrow(InvalidApprovalSecretError);
    // From the environment: the message names the variable, never the secret.
    const before = process.env['CHAMVI_APPROVAL_SECRET'];
    process.env['CHAMVI_APPROVAL_SECRET'] = FIFTEEN_BYTES;
    try {
      expect(() => chamviPlugin({ agents: [{ agent }], store: new MemoryEffectStore() })).toThrow(
        expect.objectContaining({
          name: 'InvalidApprovalSecretError',
          message: expect.not.stringContaining(FIFTEEN_BYTES) as unknown as string,
        }),
      );
      expect(() => chamviPlugin({ agents: [{ agent }], store: new MemoryEffectStore() })).toThrow(
        /^CHAMVI_APPROVAL_SECRET is 15 bytes long/,
      );
    } finally {
      if (before === undefined) delete process.env['CHAMVI_APPROVAL_SECRET'];
      else process.env['CHAMVI_APPROVAL_SECRET'] = before;
    }
  });

  it('the verify activity answers a refused verdict at once for anything it cannot verify, and never throws', async () => {
    const verify = createVerifyApprovalActivity(SECRET);
    const request = {
      runId: 'run-1',
      toolCallId: 'call-1',
      key: '',
      input: { env: 'prod' },
      nonce: 'n-1',
      approved: true,
    };
    const started = Date.now();
    for (const token of ['let-me-in', '', 'x'.repeat(100_000), `${APPROVAL_TOKEN_VERSION}.e30.AAAA`, undefined, 42]) {
      await expect(verify({ ...request, token: token as string })).resolves.toEqual({
        valid: false,
        problem: expect.any(String),
      });
    }
    // An input without a canonical form, and a request of a shape no workflow sends.
    const token = createApprovalToken(SECRET, { ...request, fingerprint: inputFingerprint(request.input) });
    await expect(verify({ ...request, token, input: { n: 10n } })).resolves.toMatchObject({ valid: false });
    await expect(verify(null as unknown as Parameters<typeof verify>[0])).resolves.toMatchObject({ valid: false });
    await expect(verify({ ...request, token })).resolves.toEqual({ valid: true });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(() => createVerifyApprovalActivity(FIFTEEN_BYTES)).toThrow(InvalidApprovalSecretError);
  });

  it('a verification activity that keeps failing refuses the decision after its 3 attempts instead of retrying forever; a later decision goes through', async () => {
    const { agent, deployed } = deployer([{ toolCalls: [deployCall('prod')] }, { text: 'Deployed.' }]);
    const verifier = { down: true, attempts: 0 };
    const result = await withWorker(
      agent,
      async (taskQueue) => {
        const handle = await startAgentRun(env.client, { agent: 'deployer', prompt: 'Deploy', taskQueue });
        const pending = await pendingOf(handle);
        const decision = { toolCallId: pending.toolCallId, approved: true, secret: SECRET };
        const started = Date.now();
        await expect(
          within(20_000, 'the refusal', decideApproval(env.client, handle.workflowId, decision)),
        ).rejects.toMatchObject({
          cause: expect.objectContaining({
            type: 'ApprovalRefusedError',
            message: expect.stringContaining('could not be verified (verifier down)'),
          }),
        });
        expect(verifier.attempts).toBe(3);
        expect(Date.now() - started).toBeLessThan(15_000);
        expect(await listPendingApprovals(env.client, handle.workflowId)).toHaveLength(1);
        verifier.down = false;
        await decideApproval(env.client, handle.workflowId, decision);
        return handle.result();
      },
      {
        interceptors: {
          activity: [
            () => ({
              inbound: {
                execute: (input, next) => {
                  if (Context.current().info.activityType !== 'chamvi.verifyApproval' || !verifier.down)
                    return next(input);
                  verifier.attempts++;
                  return Promise.reject(new Error('verifier down'));
                },
              },
            }),
          ],
        },
      },
    );
    expect(deployed).toEqual(['prod']);
    expect(result.approvals).toEqual([expect.objectContaining({ approved: true, decidedBy: 'approver' })]);
  }, 60_000);
});

describe('decisions that cost the run nothing', () => {
  it('300 garbage decisions are refused before anything is written: the history grows only by the 5 whose claims are right, and a valid decision still goes through', async () => {
    const { agent, deployed } = deployer([{ toolCalls: [deployCall('prod')] }, { text: 'Deployed.' }]);
    const { result, grown } = await withWorker(agent, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'deployer', prompt: 'Deploy', taskQueue });
      const pending = await pendingOf(handle);
      const claims = approvalClaimsFor(pending, true);
      const before = await historyOf(handle);
      const garbage: Array<{ toolCallId: string; approved: boolean; token: string }> = [];
      const id = pending.toolCallId;
      const kinds = [
        (i: number) => ({ toolCallId: id, approved: true, token: `let-me-in-${i}` }),
        (i: number) => ({ toolCallId: id, approved: true, token: `chamvi-approval.v2.${i}.sig` }),
        (i: number) => ({ toolCallId: id, approved: true, token: `${APPROVAL_TOKEN_VERSION}.${i}.not-a-signature` }),
        (i: number) => ({ toolCallId: `call-${i}`, approved: true, token: createApprovalToken(SECRET, claims) }),
        (i: number) => ({
          toolCallId: id,
          approved: true,
          token: createApprovalToken(SECRET, { ...claims, nonce: `n-${i}` }),
        }),
        (i: number) => ({
          toolCallId: id,
          approved: true,
          token: createApprovalToken(SECRET, { ...claims, runId: `run-${i}` }),
        }),
        (i: number) => ({
          toolCallId: id,
          approved: true,
          token: createApprovalToken(SECRET, { ...claims, fingerprint: inputFingerprint({ env: `env-${i}` }) }),
        }),
        // A token minted to deny, offered as an approval (and the other way round).
        () => ({ toolCallId: id, approved: true, token: createApprovalToken(SECRET, { ...claims, approved: false }) }),
        () => ({ toolCallId: id, approved: false, token: createApprovalToken(SECRET, claims) }),
        () => ({ toolCallId: id, approved: true, token: 'x'.repeat(20_000) }),
      ];
      for (let i = 0; garbage.length < 295; i++) garbage.push(kinds[i % kinds.length]!(i));
      // Exactly the pending request's claims, signed without the secret: only a worker can tell.
      for (let i = 0; i < 5; i++) {
        garbage.push({
          toolCallId: id,
          approved: true,
          token: createApprovalToken(`forged-secret-${i}-0123456789`, claims),
        });
      }
      for (const decision of garbage) await expect(send(handle, decision)).rejects.toThrow(/refused|not waiting/);
      const after = await historyOf(handle);
      expect(await listPendingApprovals(env.client, handle.workflowId)).toHaveLength(1);
      await expect(
        send(handle, { toolCallId: id, approved: true, token: createApprovalToken(SECRET, claims) }),
      ).resolves.toMatchObject({
        approved: true,
        decidedBy: 'approver',
      });
      return {
        result: await handle.result(),
        grown: { events: after.events - before.events, verifications: after.verifications - before.verifications },
      };
    });
    // The 5 forged signatures took a verification each (about 11 events); the other 295 took nothing.
    expect(grown.verifications).toBe(5);
    expect(grown.events).toBeLessThanOrEqual(5 * 12);
    expect(deployed).toEqual(['prod']);
    expect(result.approvals).toEqual([expect.objectContaining({ approved: true, decidedBy: 'approver' })]);
  }, 120_000);

  it('tokens that fail verification are checked 10 at a time: the 11th and later are refused without an activity', async () => {
    const { agent } = deployer([{ toolCalls: [deployCall('prod')] }, { text: 'Deployed.' }]);
    await withWorker(agent, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'deployer', prompt: 'Deploy', taskQueue });
      const pending = await pendingOf(handle);
      const claims = approvalClaimsFor(pending, true);
      const before = await historyOf(handle);
      for (let i = 0; i < 10; i++) {
        const token = createApprovalToken(`forged-secret-${i}-0123456789`, claims);
        await expect(send(handle, { toolCallId: pending.toolCallId, approved: true, token })).rejects.toThrow(
          /not signed/,
        );
      }
      for (let i = 0; i < 20; i++) {
        const token = createApprovalToken(`forged-secret-${i}-0123456789`, claims);
        await expect(send(handle, { toolCallId: pending.toolCallId, approved: true, token })).rejects.toThrow(
          /checked too many approval tokens that did not verify .* next check is possible at/,
        );
      }
      expect((await historyOf(handle)).verifications - before.verifications).toBe(10);
      await handle.terminate();
    });
  }, 60_000);
});

describe('valid decisions are never rationed', () => {
  it('a step with 12 calls waiting for approval takes 12 valid decisions in a row: checks that verify do not use up the budget', async () => {
    const targets = Array.from({ length: 12 }, (_, i) => `env-${i}`);
    const { agent, deployed } = deployer([{ toolCalls: targets.map((t) => deployCall(t)) }, { text: 'Deployed all.' }]);
    const result = await withWorker(agent, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'deployer', prompt: 'Deploy all', taskQueue });
      await pendingOf(handle);
      const until = Date.now() + 20_000;
      while ((await listPendingApprovals(env.client, handle.workflowId)).length < 12 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      for (const pending of await listPendingApprovals(env.client, handle.workflowId)) {
        await decideApproval(env.client, handle.workflowId, {
          toolCallId: pending.toolCallId,
          approved: true,
          secret: SECRET,
        });
      }
      return handle.result();
    });
    expect([...deployed].sort()).toEqual([...targets].sort());
    expect(result.approvals).toHaveLength(12);
  }, 60_000);
});

describe('a decision answers one request', () => {
  it('the step-0 approval of a deploy, replayed on the step-1 call with the same id and input, is refused; so is an expired token; the call waits for its own', async () => {
    const { agent, deployed } = deployer([
      { toolCalls: [deployCall('prod', 'deploy-1')] },
      { toolCalls: [deployCall('prod', 'deploy-1')] },
      { text: 'Deployed twice.' },
    ]);
    const result = await withWorker(agent, async (taskQueue) => {
      const handle = await startAgentRun(env.client, { agent: 'deployer', prompt: 'Deploy twice', taskQueue });
      const first = await pendingOf(handle, 0);
      const stepZero = createApprovalToken(SECRET, approvalClaimsFor(first, true));
      await send(handle, { toolCallId: 'deploy-1', approved: true, token: stepZero });
      const second = await pendingOf(handle, 1);
      expect([first.toolCallId, first.input, first.key]).toEqual([second.toolCallId, second.input, second.key]);
      expect(second.nonce).toEqual(expect.any(String));
      expect(second.nonce).not.toBe(first.nonce);
      await expect(send(handle, { toolCallId: 'deploy-1', approved: true, token: stepZero })).rejects.toThrow(
        /minted for another request of this call/,
      );
      const expired = createApprovalToken(SECRET, {
        ...approvalClaimsFor(second, true),
        expiresAt: Date.now() - 1_000,
      });
      await expect(send(handle, { toolCallId: 'deploy-1', approved: true, token: expired })).rejects.toThrow(
        /the approval token expired at \d{4}-\d\d-\d\dT/,
      );
      expect(deployed).toEqual(['prod']);
      const inTime = createApprovalToken(SECRET, {
        ...approvalClaimsFor(second, true),
        expiresAt: Date.now() + 60_000,
      });
      await send(handle, { toolCallId: 'deploy-1', approved: true, token: inTime });
      return handle.result();
    });
    expect(deployed).toEqual(['prod', 'prod']);
    expect(result.approvals).toEqual([
      expect.objectContaining({ toolCallId: 'deploy-1', approved: true, decidedBy: 'approver' }),
      expect.objectContaining({ toolCallId: 'deploy-1', approved: true, decidedBy: 'approver' }),
    ]);
  }, 60_000);
});

describe('one id, two calls', () => {
  /** The run's failure: the model step's (an activity failure's cause), or the workflow's own. */
  async function failureOf(handle: WorkflowHandle): Promise<ApplicationFailure | undefined> {
    const error = await within(20_000, 'the run failing', handle.result()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    return ((cause as { cause?: unknown } | undefined)?.cause ?? cause) as ApplicationFailure | undefined;
  }

  it.each([
    ['both need approval', true],
    ['neither needs approval', false],
  ])(
    'a model step with two tool calls of one id fails the run at once with DuplicateToolCallIdError, running neither (%s)',
    async (_, needsApproval) => {
      const { agent, deployed } = deployer(
        [{ toolCalls: [deployCall('prod', 'dup'), deployCall('staging', 'dup')] }, { text: 'Done.' }],
        needsApproval,
      );
      const failure = await withWorker(agent, async (taskQueue) => {
        const handle = await startAgentRun(env.client, { agent: 'deployer', prompt: 'Deploy both', taskQueue });
        return failureOf(handle);
      });
      expect(failure?.type).toBe('DuplicateToolCallIdError');
      expect(failure?.nonRetryable).toBe(true);
      expect(failure?.message).toContain('Model step 0 of run');
      expect(failure?.message).toContain('returned 2 tool calls with the id "dup" (deploy, deploy)');
      expect(deployed).toEqual([]);
    },
    60_000,
  );

  it('the approval gate refuses a second waiting call with the same id from a plan made elsewhere, instead of stalling', async () => {
    const { agent } = deployer([]);
    const failure = await withWorker(agent, async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof duplicateApprovalWorkflow>('duplicateApprovalWorkflow', {
        taskQueue,
        workflowId: `duplicate-${randomUUID()}`,
      });
      return failureOf(handle);
    });
    expect(failure?.type).toBe('DuplicateToolCallIdError');
    expect(failure?.message).toContain('both have the id "dup"');
  }, 60_000);
});
