import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, type WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import {
  defineAgent,
  defineEffectTool,
  inputFingerprint,
  type Agent,
  type EffectTool,
  type IEffectStore,
} from '../../src/index.js';
import { createApprovalToken } from '../../src/approvals/approval-token.js';
import { loadConversation } from '../../src/conversation/load-conversation.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker, type AgentRegistration } from '../../worker/index.js';
import { approvalClaimsFor, decideApproval, listPendingApprovals } from '../../client/approvals-client.js';
import { approvalDecisionSignal, decideApprovalUpdate } from '../../common/approval-handlers.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import type { AgentRunOutput } from '../../workflows/agent-loop.js';
import type { PendingApproval } from '../../common/approval-types.js';
import { commentsOn, createResponder, OWNER, openIssue, REPO } from '../fixtures/responder.js';
import { runCli } from '../product/run-cli.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import type { directEffectCallWorkflow, forgedEffectCallWorkflow } from '../fixtures/workflows.js';
import type { ToolCallInput } from '../../common/index.js';

const SECRET = 'approval-secret-for-tests-0123456789';

let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  github = await new LocalGitHubServer().start();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await github?.stop();
  await env?.teardown();
});

/** The responder whose comment tool needs approval (AI SDK 7's `needsApproval` on the tool). */
function guardedResponder(script: Parameters<typeof scriptedModel>[0]): Agent {
  const base = createResponder({ githubUrl: github.url, model: scriptedModel(script) });
  return defineAgent({
    name: 'responder',
    model: base.model,
    ...(base.instructions !== undefined ? { instructions: base.instructions } : {}),
    // defineEffectTool again: a spread copy would lose the (non-enumerable) effect-tool brand.
    tools: {
      ...base.tools,
      comment: defineEffectTool({ ...(base.tools['comment'] as EffectTool), needsApproval: true }),
    },
  });
}

let lastStore: IEffectStore = new MemoryEffectStore();

/** A run's messages, read from the store of the worker that ran it (the last `withWorker`'s). */
async function messagesOfRun(result: AgentRunOutput): Promise<Array<{ role: string; content: unknown }>> {
  return loadConversation(lastStore as MemoryEffectStore, result);
}

/** Runs a worker (prebuilt bundle, time-skipping server) while `body` runs. */
async function withWorker<T>(
  taskQueue: string,
  agent: AgentRegistration,
  body: () => Promise<T>,
  store: IEffectStore = new MemoryEffectStore(),
  cache = true,
): Promise<T> {
  lastStore = store;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [agent],
    store,
    approvalSecret: SECRET,
    // Without a cache, no sticky queue: the time-skipping server would otherwise hold the run's
    // next task for the stopped worker until the sticky timeout passes in (locked) server time.
    workerOptions: { workflowBundle: bundle, ...(cache ? {} : { maxCachedWorkflows: 0 }) },
  });
  return worker.runUntil(body());
}

async function pendingOf(handle: WorkflowHandle, count = 1): Promise<PendingApproval[]> {
  const until = Date.now() + 20_000;
  for (;;) {
    const pending = await listPendingApprovals(env.client, handle.workflowId).catch(() => []);
    if (pending.length >= count) return pending;
    if (Date.now() > until) throw new Error('no pending approval in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const commentCall = (issue: number, toolCallId?: string) => ({
  toolName: 'comment',
  input: { issue, body: 'Thanks!' },
  ...(toolCallId !== undefined ? { toolCallId } : {}),
});

describe('durable approval of effect tools (time-skipping server)', () => {
  it('waits three days across a worker restart, then an approved call applies its effect once', async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([{ toolCalls: [commentCall(issue)] }, { text: 'Done.' }]);
    const store = new MemoryEffectStore();
    const taskQueue = `q-${randomUUID()}`;
    // First worker: the run reaches the approval and waits; then the worker goes away.
    const { handle, pending } = await withWorker(
      taskQueue,
      { agent },
      async () => {
        const h = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer ${issue}`, taskQueue });
        return { handle: h, pending: await pendingOf(h) };
      },
      store,
      false,
    );
    expect(pending).toEqual([
      expect.objectContaining({
        toolName: 'comment',
        toolCallId: 'call-0-0',
        key: `${handle.firstExecutionRunId}:comment:${issue}`,
        fingerprint: inputFingerprint({ issue, body: 'Thanks!' }),
        onTimeout: 'deny',
      }),
    ]);
    expect(commentsOn(github, issue)).toBe(0);
    await env.sleep('3 days');
    // A new worker (empty workflow cache: the run is replayed from history) takes the decision.
    const result = await withWorker(
      taskQueue,
      { agent },
      async () => {
        const record = await decideApproval(env.client, handle.workflowId, {
          toolCallId: 'call-0-0',
          approved: true,
          reason: 'ok',
          approver: 'bob',
          secret: SECRET,
        });
        expect(record).toMatchObject({ approved: true, decidedBy: 'approver', approver: 'bob' });
        return handle.result();
      },
      store,
    );
    expect(commentsOn(github, issue)).toBe(1);
    expect(result.effects).toEqual([expect.objectContaining({ toolName: 'comment', outcome: 'executed' })]);
    const [approval] = result.approvals;
    expect(approval).toMatchObject({ toolCallId: 'call-0-0', approved: true, decidedBy: 'approver', reason: 'ok' });
    const waited = Date.parse(approval?.decidedAt ?? '') - Date.parse(approval?.requestedAt ?? '');
    expect(waited).toBeGreaterThanOrEqual(3 * 86_400_000);
  });

  it('a denied call never touches the remote, and the model is told why', async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([{ toolCalls: [commentCall(issue)] }, { text: 'Understood.' }]);
    const taskQueue = `q-${randomUUID()}`;
    const result = await withWorker(taskQueue, { agent }, async () => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer ${issue}`, taskQueue });
      await pendingOf(handle);
      await decideApproval(env.client, handle.workflowId, {
        toolCallId: 'call-0-0',
        approved: false,
        reason: 'wrong tone',
        secret: SECRET,
      });
      return handle.result();
    });
    expect(commentsOn(github, issue)).toBe(0);
    // The report lists the denied call too: nothing ran, 0 attempts.
    expect(result.effects).toEqual([
      expect.objectContaining({
        toolName: 'comment',
        outcome: 'denied',
        attempts: 0,
        reason: expect.stringContaining('wrong tone'),
      }),
    ]);
    expect(result.approvals).toEqual([
      expect.objectContaining({ approved: false, decidedBy: 'approver', reason: 'wrong tone' }),
    ]);
    const told = JSON.stringify((await messagesOfRun(result)).filter((m) => m.role === 'tool'));
    expect(told).toContain('execution-denied');
    expect(told).toContain('wrong tone');
    expect(result.text).toBe('Understood.');
  });

  it('nobody answers: the call is denied when the approval timeout passes', async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([{ toolCalls: [commentCall(issue)] }, { text: 'No answer, no comment.' }]);
    const taskQueue = `q-${randomUUID()}`;
    const result = await withWorker(taskQueue, { agent, approvalTimeout: '2 days' }, async () => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer ${issue}`, taskQueue });
      return handle.result();
    });
    expect(commentsOn(github, issue)).toBe(0);
    expect(result.approvals).toEqual([expect.objectContaining({ approved: false, decidedBy: 'timeout' })]);
    const [approval] = result.approvals;
    expect(Date.parse(approval?.decidedAt ?? '') - Date.parse(approval?.requestedAt ?? '')).toBeGreaterThanOrEqual(
      2 * 86_400_000,
    );
    expect(JSON.stringify(await messagesOfRun(result))).toContain('Nobody decided within 2 days');
  });

  it('with onApprovalTimeout approve, nobody answering applies the effect once when the timeout passes', async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([{ toolCalls: [commentCall(issue)] }, { text: 'Posted after the wait.' }]);
    const taskQueue = `q-${randomUUID()}`;
    const result = await withWorker(
      taskQueue,
      { agent, approvalTimeout: '1 day', onApprovalTimeout: 'approve' },
      async () =>
        (await startAgentRun(env.client, { agent: 'responder', prompt: `Answer ${issue}`, taskQueue })).result(),
    );
    expect(commentsOn(github, issue)).toBe(1);
    expect(result.approvals).toEqual([expect.objectContaining({ approved: true, decidedBy: 'timeout' })]);
    expect(result.effects).toEqual([expect.objectContaining({ toolName: 'comment', outcome: 'executed' })]);
  });

  it('a decision sent by signal is taken, and a forged one sent by signal is dropped', async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([{ toolCalls: [commentCall(issue)] }, { text: 'Done.' }]);
    const taskQueue = `q-${randomUUID()}`;
    const result = await withWorker(taskQueue, { agent }, async () => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer ${issue}`, taskQueue });
      const [call] = await pendingOf(handle);
      const claims = approvalClaimsFor(call!, true);
      const forged = createApprovalToken('not-the-workers-secret-0123456789', claims);
      await handle.signal(approvalDecisionSignal, { toolCallId: call!.toolCallId, approved: true, token: forged });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await listPendingApprovals(env.client, handle.workflowId)).toHaveLength(1);
      expect(commentsOn(github, issue)).toBe(0);
      const token = createApprovalToken(SECRET, claims);
      await handle.signal(approvalDecisionSignal, {
        toolCallId: call!.toolCallId,
        approved: true,
        token,
        approver: 'carol',
      });
      return handle.result();
    });
    expect(commentsOn(github, issue)).toBe(1);
    expect(result.approvals).toEqual([
      expect.objectContaining({ approved: true, decidedBy: 'approver', approver: 'carol' }),
    ]);
  });

  it('workflow code that skips the approval gate cannot apply a guarded effect: the activity checks the approval itself', async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([]);
    const taskQueue = `q-${randomUUID()}`;
    const result = await withWorker(taskQueue, { agent }, () =>
      env.client.workflow.execute<typeof directEffectCallWorkflow>('directEffectCallWorkflow', {
        taskQueue,
        workflowId: `direct-${randomUUID()}`,
        args: [{ agent: 'responder', toolName: 'comment', toolInput: { issue, body: 'Sneaky.' } }],
      }),
    );
    expect(result.failure?.type).toBe('ApprovalRequiredError');
    expect(result.failure?.message).toContain('needs approval and reached its activity without one');
    expect(result.effects).toEqual([]);
    expect(commentsOn(github, issue)).toBe(0);
  });

  it("an activity input pairing input B with approved input A's key and token applies nothing: EffectKeyMismatchError", async () => {
    const [a, b] = [openIssue(github), openIssue(github)];
    const agent = guardedResponder([]);
    const taskQueue = `q-${randomUUID()}`;
    const runId = `run-${randomUUID()}`;
    const keyA = `${runId}:comment:${a}`;
    const tokenA = createApprovalToken(SECRET, {
      runId,
      toolCallId: 'call-a',
      key: keyA,
      fingerprint: inputFingerprint({ issue: a, body: 'Thanks!' }),
      nonce: '',
      approved: true,
    });
    const forged: ToolCallInput = {
      agent: 'responder',
      runId,
      toolName: 'comment',
      toolCallId: 'call-a',
      input: { issue: b, body: 'Thanks!' },
      key: keyA,
      messages: [],
      approval: { approved: true, decidedBy: 'approver', token: tokenA },
    };
    const result = await withWorker(taskQueue, { agent }, () =>
      env.client.workflow.execute<typeof forgedEffectCallWorkflow>('forgedEffectCallWorkflow', {
        taskQueue,
        workflowId: `forged-${randomUUID()}`,
        args: [forged],
      }),
    );
    expect(result.failure?.type).toBe('EffectKeyMismatchError');
    expect(result.failure?.message).toContain('nothing was applied');
    expect(commentsOn(github, b)).toBe(0);
    expect(commentsOn(github, a)).toBe(0);
  });

  it("an effect-call activity input carrying another input's key applies nothing without an approval too: EffectKeyMismatchError", async () => {
    const [a, b] = [openIssue(github), openIssue(github)];
    // The comment tool without needsApproval: only the effect-call activity's own key check stands.
    const agent = createResponder({ githubUrl: github.url, model: scriptedModel([]) });
    const taskQueue = `q-${randomUUID()}`;
    const runId = `run-${randomUUID()}`;
    const result = await withWorker(taskQueue, { agent }, () =>
      env.client.workflow.execute<typeof forgedEffectCallWorkflow>('forgedEffectCallWorkflow', {
        taskQueue,
        workflowId: `forged-${randomUUID()}`,
        args: [
          {
            agent: 'responder',
            runId,
            toolName: 'comment',
            toolCallId: 'call-b',
            input: { issue: b, body: 'Thanks!' },
            key: `${runId}:comment:${a}`,
            messages: [],
          },
        ],
      }),
    );
    expect(result.failure?.type).toBe('EffectKeyMismatchError');
    expect(commentsOn(github, b)).toBe(0);
    expect(commentsOn(github, a)).toBe(0);
  });

  it("an activity input with approved A's key, call id and token but an altered body applies nothing: the token binds the input's fingerprint", async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([{ toolCalls: [commentCall(issue)] }, { text: 'Done.' }]);
    const taskQueue = `q-${randomUUID()}`;
    const { forged, result } = await withWorker(taskQueue, { agent }, async () => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer ${issue}`, taskQueue });
      const [pending] = await pendingOf(handle);
      // What an approver mints for the call as listed: its run, call id, key and input fingerprint.
      const token = createApprovalToken(SECRET, approvalClaimsFor(pending!, true));
      // The responder's key ignores the body, so the altered call has exactly the approved key.
      const altered: ToolCallInput = {
        agent: 'responder',
        runId: pending!.runId,
        toolName: 'comment',
        toolCallId: pending!.toolCallId,
        input: { issue, body: 'Altered after approval.' },
        key: pending!.key,
        messages: [],
        approval: { approved: true, decidedBy: 'approver', token },
      };
      // A client that does not skip time: the run's approval must still be waiting afterwards.
      const waitingClient = new Client({
        connection: env.connection,
        ...(env.namespace ? { namespace: env.namespace } : {}),
      });
      const forgedRun = await waitingClient.workflow.execute<typeof forgedEffectCallWorkflow>(
        'forgedEffectCallWorkflow',
        {
          taskQueue,
          workflowId: `forged-${randomUUID()}`,
          args: [altered],
        },
      );
      expect(commentsOn(github, issue)).toBe(0);
      // The approved input itself still goes through with the same token.
      await handle.executeUpdate(decideApprovalUpdate, {
        args: [{ toolCallId: pending!.toolCallId, approved: true, token }],
      });
      return { forged: forgedRun, result: await handle.result() };
    });
    expect(forged.failure?.type).toBe('ApprovalRequiredError');
    expect(forged.failure?.message).toContain('minted for another input of this call');
    expect(forged.failure?.message).toContain('nothing was applied');
    const bodies = (github.tracker.listComments(OWNER, REPO, issue) ?? []).map((c) => c.body);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toContain('Thanks!');
    expect(bodies[0]).not.toContain('Altered');
    expect(result.effects).toEqual([expect.objectContaining({ toolName: 'comment', outcome: 'executed' })]);
  });

  it('deciding without an approval secret fails with ApprovalSecretMissingError before anything reaches the run', async () => {
    const workflowId = `no-such-run-${randomUUID()}`;
    const decided = decideApproval(env.client, workflowId, { toolCallId: 'call-0-0', approved: true, secret: '' });
    await expect(decided).rejects.toMatchObject({ name: 'ApprovalSecretMissingError', retryable: false });
    await expect(decided).rejects.toThrow(/No approval secret .* call-0-0 of workflow no-such-run-.*nothing was sent/);
  });

  it('forged, misbound and replayed decisions are refused; the call waits for a valid one', async () => {
    const [a, b] = [openIssue(github), openIssue(github)];
    const agent = guardedResponder([
      { toolCalls: [commentCall(a, 'call-a'), commentCall(b, 'call-b')] },
      { text: 'Done.' },
    ]);
    const taskQueue = `q-${randomUUID()}`;
    const result = await withWorker(taskQueue, { agent }, async () => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: 'Answer both', taskQueue });
      const pending = await pendingOf(handle, 2);
      const callA = pending.find((p) => p.toolCallId === 'call-a') as PendingApproval;
      const callB = pending.find((p) => p.toolCallId === 'call-b') as PendingApproval;
      // The update fails with WorkflowUpdateFailedError; the refusal's message is its cause's.
      const send = (toolCallId: string, approved: boolean, token: string) =>
        handle
          .executeUpdate(decideApprovalUpdate, { args: [{ toolCallId, approved, token }] })
          .catch((error: unknown) => {
            const cause = (error as { cause?: Error }).cause;
            throw new Error(`${(error as Error).message}: ${cause?.message ?? ''}`);
          });
      const claims = (p: PendingApproval, approved: boolean) => approvalClaimsFor(p, approved);

      // Forged: signed with a secret the workers do not hold.
      await expect(
        send('call-a', true, createApprovalToken('not-the-workers-secret-xxxxxxxx', claims(callA, true))),
      ).rejects.toThrow(/not signed/);
      // Garbage.
      await expect(send('call-a', true, 'let-me-in')).rejects.toThrow(/not a chamvi approval token/);
      // A valid token for call A replayed onto call B.
      const approveA = createApprovalToken(SECRET, claims(callA, true));
      await expect(send('call-b', true, approveA)).rejects.toThrow(/another tool call/);
      // A token minted to deny, offered as an approval.
      await expect(send('call-b', true, createApprovalToken(SECRET, claims(callB, false)))).rejects.toThrow(
        /minted to deny/,
      );
      // A token for another run (same call id and key shape).
      await expect(
        send('call-b', true, createApprovalToken(SECRET, { ...claims(callB, true), runId: 'other-run' })),
      ).rejects.toThrow(/another run/);
      // A token for call A's run, call and key, but another input (the key ignores the body).
      const otherBody = inputFingerprint({ issue: a, body: 'Something else.' });
      await expect(
        send('call-a', true, createApprovalToken(SECRET, { ...claims(callA, true), fingerprint: otherBody })),
      ).rejects.toThrow(/another input/);
      expect((await listPendingApprovals(env.client, handle.workflowId)).map((p) => p.toolCallId).sort()).toEqual([
        'call-a',
        'call-b',
      ]);

      // The valid decision for A counts once; replaying it is refused.
      await expect(send('call-a', true, approveA)).resolves.toMatchObject({ approved: true, decidedBy: 'approver' });
      await expect(send('call-a', true, approveA)).rejects.toThrow(/already approved|not waiting/);
      await send('call-b', false, createApprovalToken(SECRET, claims(callB, false)));
      return handle.result();
    });
    expect(commentsOn(github, a)).toBe(1);
    expect(commentsOn(github, b)).toBe(0);
    expect(result.approvals.map((r) => [r.toolCallId, r.approved]).sort()).toEqual([
      ['call-a', true],
      ['call-b', false],
    ]);
  });

  it('after 10 tokens that did not verify, the run checks one more an hour: a valid decision is refused until then, and goes through after', async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([{ toolCalls: [commentCall(issue)] }, { text: 'Done.' }]);
    const taskQueue = `q-${randomUUID()}`;
    const result = await withWorker(taskQueue, { agent }, async () => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer ${issue}`, taskQueue });
      const [pending] = await pendingOf(handle);
      const claims = approvalClaimsFor(pending!, true);
      const send = (token: string) =>
        handle
          .executeUpdate(decideApprovalUpdate, { args: [{ toolCallId: pending!.toolCallId, approved: true, token }] })
          .catch((error: unknown) => {
            throw new Error((error as { cause?: Error }).cause?.message ?? String(error));
          });
      for (let i = 0; i < 10; i++) {
        await expect(send(createApprovalToken(`forged-secret-${i}-0123456789`, claims))).rejects.toThrow(/not signed/);
      }
      const valid = createApprovalToken(SECRET, claims);
      await expect(send(valid)).rejects.toThrow(/checked too many approval tokens .* next check is possible at/);
      await env.sleep('1 hour');
      await expect(send(valid)).resolves.toMatchObject({ approved: true, decidedBy: 'approver' });
      return handle.result();
    });
    expect(commentsOn(github, issue)).toBe(1);
    expect(result.approvals).toEqual([expect.objectContaining({ approved: true, decidedBy: 'approver' })]);
  });

  it('approving a call whose effect was already applied returns the recorded result: no second effect', async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([{ toolCalls: [commentCall(issue)] }, { text: 'Done.' }]);
    const runId = `run-${randomUUID()}`;
    const store = new MemoryEffectStore();
    // An earlier attempt of this run applied and recorded the effect (say, before a reset).
    await store.put(`${runId}:comment:${issue}`, {
      toolName: 'comment',
      result: { id: 4242 },
      origin: 'executed',
      runId,
    });
    const taskQueue = `q-${randomUUID()}`;
    const result = await withWorker(
      taskQueue,
      { agent },
      async () => {
        const handle = await startAgentRun(env.client, {
          agent: 'responder',
          prompt: `Answer ${issue}`,
          taskQueue,
          runId,
        });
        const [pending] = await pendingOf(handle);
        expect(pending?.key).toBe(`${runId}:comment:${issue}`);
        await decideApproval(env.client, handle.workflowId, { toolCallId: 'call-0-0', approved: true, secret: SECRET });
        return handle.result();
      },
      store,
    );
    expect(commentsOn(github, issue)).toBe(0);
    expect(result.effects).toEqual([
      expect.objectContaining({ outcome: 'recorded', key: `${runId}:comment:${issue}` }),
    ]);
    expect(JSON.stringify(await messagesOfRun(result))).toContain('4242');
  });

  it('the CLI lists pending approvals and denies one with a reason (chamvi approvals / chamvi approve --deny)', async () => {
    const issue = openIssue(github);
    const agent = guardedResponder([{ toolCalls: [commentCall(issue)] }, { text: 'Fine.' }]);
    const taskQueue = `q-${randomUUID()}`;
    const cliEnv = { TEMPORAL_ADDRESS: env.address, CHAMVI_APPROVAL_SECRET: SECRET };
    const result = await withWorker(taskQueue, { agent }, async () => {
      const handle = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer ${issue}`, taskQueue });
      await pendingOf(handle);
      const listed = await runCli(['approvals', handle.workflowId], cliEnv);
      expect(listed.stderr).toBe('');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/call-0-0\s+comment/);
      const noSecret = await runCli(['approve', handle.workflowId, 'call-0-0'], { TEMPORAL_ADDRESS: env.address });
      expect(noSecret.code).toBe(2);
      const denied = await runCli(
        ['approve', handle.workflowId, 'call-0-0', '--deny', '--reason', 'not now', '--approver', 'carol'],
        cliEnv,
      );
      expect(denied.code).toBe(0);
      expect(denied.stdout).toContain('denied comment call call-0-0');
      return handle.result();
    });
    expect(commentsOn(github, issue)).toBe(0);
    expect(result.approvals).toEqual([
      expect.objectContaining({ approved: false, approver: 'carol', reason: 'not now' }),
    ]);
  }, 90_000);
});
