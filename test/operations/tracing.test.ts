// Tracing with the real OpenTelemetry SDK (1.x, the one @temporalio/interceptors-opentelemetry 1.24
// speaks), set up as the README says (examples/tracing/tracing.ts), against a dev server: one trace
// per run, the agent run as one `invoke_agent` span with a step span per model step, the effect
// spans with their attributes and events, approvals, failed, cancelled and continued runs, and exact
// counts when an activity is retried, when every workflow task replays the history and after a
// worker is SIGKILLed in the crash window (worker processes exporting to span files).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker, type WorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import { APICallError } from '@ai-sdk/provider';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setUpTracing } from '../../examples/tracing/tracing.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { decideApproval, listPendingApprovals } from '../../client/index.js';
import { chamviPlugin, createAgentWorker, type AgentRegistration } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { chamviWorkflowsPath } from '../../worker/workflows-path.js';
import { quietLogger } from '../fixtures/bundle.js';
import { commentsOn, createResponder, openIssue } from '../fixtures/responder.js';
import { readSpanFile, spanRecord, type SpanRecord } from './fixtures/span-records.js';
import { spawnWorker, stopSpawnedWorkers, type SpawnedWorker } from './fixtures/spawn-worker.js';
import { logLines } from './fixtures/json-logs.js';
import { countByName, named, only, parentOf, printTree } from './fixtures/span-tree.js';

const SECRET = 'tracing-test-secret-0123456789abcdef';
const TRACING_WORKER = fileURLToPath(new URL('./fixtures/tracing-worker.ts', import.meta.url));

let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;
let client: Client;
let bundle: WorkflowBundle;
let dir: string;
const exporter = new InMemorySpanExporter();
const { plugin, provider } = setUpTracing('tracing-test', new SimpleSpanProcessor(exporter));

beforeAll(async () => {
  env = await createDevServerEnvironment();
  github = await new LocalGitHubServer().start();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-tracing-'));
  client = new Client({ connection: env.connection, plugins: [plugin] });
  // A prebuilt bundle, as a production worker has it: the tracing plugin adds its workflow interceptors at bundling.
  bundle = await bundleWorkflowCode({ workflowsPath: chamviWorkflowsPath(), plugins: [plugin], logger: quietLogger });
}, 120_000);

afterAll(async () => {
  await stopSpawnedWorkers();
  await provider.shutdown();
  await github?.stop();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => exporter.reset());

/** Everything exported since the test began (each test runs one run). */
function finished(): SpanRecord[] {
  return exporter.getFinishedSpans().map(spanRecord);
}

const twoSteps = (issue: number) =>
  scriptedModel([
    { toolCalls: [{ toolName: 'comment', input: { issue, body: 'Thanks for the report!' } }] },
    { text: 'Done.' },
  ]);

async function withWorker<T>(
  taskQueue: string,
  agent: AgentRegistration,
  body: () => Promise<T>,
  workerOptions: Partial<WorkerOptions> = {},
): Promise<T> {
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents: [agent],
    store: new MemoryEffectStore(),
    approvalSecret: SECRET,
    workerOptions: { workflowBundle: bundle, plugins: [plugin], ...workerOptions },
  });
  return worker.runUntil(body());
}

async function run(issue: number, agent: AgentRegistration, workerOptions: Partial<WorkerOptions> = {}) {
  const taskQueue = `tracing-${randomUUID()}`;
  return withWorker(
    taskQueue,
    agent,
    async () => {
      const handle = await startAgentRun(client, { agent: 'responder', prompt: `Answer issue ${issue}`, taskQueue });
      return { handle, result: await handle.result() };
    },
    workerOptions,
  );
}

/** The span counts of a two-step run with one effect call, attempts of that call aside. */
function twoStepCounts(effectAttempts: number): Record<string, number> {
  return {
    'StartWorkflow:agentWorkflow': 1,
    'RunWorkflow:agentWorkflow': 1,
    'StartActivity:chamvi.modelStep': 2,
    'RunActivity:chamvi.modelStep': 2,
    'StartActivity:chamvi.effectCall': 1,
    'RunActivity:chamvi.effectCall': effectAttempts,
    'chamvi.effect comment': effectAttempts,
    'invoke_agent responder': 1,
    'step 1': 1,
    'step 2': 1,
    'chat scripted': 2,
  };
}

/** The agent run's shape: one invoke_agent span, its step spans, each model call under its step (in time too). */
function expectOneAgentRun(spans: SpanRecord[]): void {
  const agentRun = only(spans, 'invoke_agent responder');
  expect(agentRun.parentSpanId).toBeUndefined();
  expect(agentRun.attributes).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'responder',
  });
  const chats = named(spans, 'chat scripted');
  for (const [i, name] of ['step 1', 'step 2'].entries()) {
    const step = only(spans, name);
    expect(parentOf(spans, step)).toBe(agentRun);
    expect(step.attributes).toMatchObject({ 'gen_ai.operation.name': 'agent_step' });
    const chat = chats[i] as SpanRecord;
    expect(parentOf(spans, chat)).toBe(step);
    expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'scripted' });
    // Workflow time (the step) is taken when a workflow task starts, a little before the activity (the call).
    expect(step.startMs).toBeLessThanOrEqual(chat.startMs + 5);
    expect(step.endMs).toBeGreaterThanOrEqual(chat.endMs - 5);
    expect(agentRun.startMs).toBeLessThanOrEqual(step.startMs);
    expect(agentRun.endMs).toBeGreaterThanOrEqual(step.endMs);
  }
  // Each model step's activity span names the agent and the step.
  expect(named(spans, 'RunActivity:chamvi.modelStep').map((s) => s.attributes)).toEqual([
    expect.objectContaining({ 'gen_ai.agent.name': 'responder', 'chamvi.step': 0 }),
    expect.objectContaining({ 'gen_ai.agent.name': 'responder', 'chamvi.step': 1 }),
  ]);
}

describe('tracing a run with the OpenTelemetry SDK and the Temporal interceptors (dev server)', () => {
  it('one run is one trace: one agent-run span with a step span per model step, and the effect call as a span of its attempt', async () => {
    const issue = openIssue(github);
    const agent = createResponder({
      githubUrl: github.url,
      model: twoSteps(issue),
      // What an HTTP instrumentation does around the tool's request.
      beforeComment: async () => trace.getTracer('http').startActiveSpan('POST /comments', (span) => span.end()),
    });
    const { handle, result } = await run(issue, { agent });
    expect(commentsOn(github, issue)).toBe(1);
    const spans = finished();
    process.stdout.write(`--- the spans of run ${handle.workflowId} ---\n${printTree(spans)}\n`);

    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(countByName(spans)).toEqual({ ...twoStepCounts(1), 'POST /comments': 1 });
    expectOneAgentRun(spans);

    // Temporal's tree: client start, workflow, activity start, activity attempt, effect span.
    const effect = only(spans, 'chamvi.effect comment');
    const attempt = parentOf(spans, effect);
    expect(attempt?.name).toBe('RunActivity:chamvi.effectCall');
    expect(parentOf(spans, attempt as SpanRecord)?.name).toBe('StartActivity:chamvi.effectCall');
    const workflow = only(spans, 'RunWorkflow:agentWorkflow');
    expect(parentOf(spans, only(spans, 'StartActivity:chamvi.effectCall'))).toBe(workflow);
    expect(parentOf(spans, workflow)?.name).toBe('StartWorkflow:agentWorkflow');

    expect(effect.attributes).toMatchObject({
      'chamvi.effect.tool': 'comment',
      'chamvi.effect.key': result.effects[0]?.key,
      'chamvi.effect.outcome': 'executed',
      'chamvi.effect.attempt': 1,
      'chamvi.effect.fence': 1,
      'chamvi.run.id': handle.firstExecutionRunId,
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'comment',
      'gen_ai.tool.call.id': 'call-0-0',
      'gen_ai.agent.name': 'responder',
    });
    expect(effect.status.code).toBe(1);
    // The tool's own spans (its HTTP request) belong to the attempt's effect span.
    expect(parentOf(spans, only(spans, 'POST /comments'))).toBe(effect);
    expect(effect.events).toEqual([
      { name: 'claim', attributes: { result: 'acquired', fence: 1 } },
      { name: 'alreadyApplied', attributes: { result: 'nothing' } },
      { name: 'execute', attributes: { phase: 'start' } },
      { name: 'execute', attributes: { phase: 'end' } },
      { name: 'record', attributes: { result: 'done' } },
    ]);
  });

  it('a retried effect call has one span per attempt, the failed one with its error type, and the run stays one agent run', async () => {
    const issue = openIssue(github);
    let failed = false;
    const agent = createResponder({
      githubUrl: github.url,
      model: twoSteps(issue),
      // The comment is posted, then the attempt fails: the retry finds it through alreadyApplied.
      afterComment: () => {
        if (failed) return;
        failed = true;
        throw new TypeError('the connection dropped after the post');
      },
    });
    const { result } = await run(issue, { agent, tools: { comment: { retry: { initialInterval: '50 ms' } } } });
    expect(commentsOn(github, issue)).toBe(1);
    expect(result.effects).toEqual([expect.objectContaining({ outcome: 'reconciled', attempts: 2 })]);
    const spans = finished();

    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(countByName(spans)).toEqual(twoStepCounts(2));
    expectOneAgentRun(spans);
    const [first, second] = named(spans, 'chamvi.effect comment');
    expect(first?.attributes).toMatchObject({
      'chamvi.effect.attempt': 1,
      'chamvi.effect.outcome': 'failed',
      'error.type': 'TypeError',
    });
    expect(first?.status).toEqual({ code: 2, message: 'the connection dropped after the post' });
    expect(first?.events.at(-1)).toEqual({ name: 'execute', attributes: { phase: 'end', 'error.type': 'TypeError' } });
    expect(second?.attributes).toMatchObject({ 'chamvi.effect.attempt': 2, 'chamvi.effect.outcome': 'reconciled' });
    expect(second?.events.map((e) => `${e.name}:${String(e.attributes['result'] ?? e.attributes['phase'])}`)).toEqual([
      'claim:acquired',
      'alreadyApplied:found',
      'record:done',
    ]);
    // Each attempt's span is a child of that attempt's activity span.
    expect(new Set([first, second].map((s) => parentOf(spans, s as SpanRecord)?.spanId)).size).toBe(2);
  });

  it('a worker without a workflow cache replays the history at every task and reports nothing twice; a replay of the history reports nothing', async () => {
    const issue = openIssue(github);
    const agent: AgentRegistration = {
      agent: createResponder({ githubUrl: github.url, model: twoSteps(issue) }),
      // Decided in the first step (by the timeout): every later task replays the decision.
      toolApproval: { comment: 'user-approval' },
      approvalTimeout: '1 second',
      onApprovalTimeout: 'approve',
    };
    const { handle } = await run(issue, agent, { maxCachedWorkflows: 0 });
    expect(commentsOn(github, issue)).toBe(1);
    const spans = finished();
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(countByName(spans)).toEqual({ ...twoStepCounts(1), 'chamvi.approval comment': 1 });
    expectOneAgentRun(spans);

    exporter.reset();
    const history = await handle.fetchHistory();
    await Worker.runReplayHistory(
      {
        workflowBundle: bundle,
        plugins: [plugin, chamviPlugin({ agents: [agent], store: new MemoryEffectStore(), workflowsPath: false })],
      },
      history,
      handle.workflowId,
    );
    expect(finished()).toEqual([]);
  });

  it("an approver's decision is a span of the run from request to decision, naming the approver; the approved call's span says who decided", async () => {
    const issue = openIssue(github);
    const agent = createResponder({ githubUrl: github.url, model: twoSteps(issue) });
    const taskQueue = `tracing-${randomUUID()}`;
    await withWorker(taskQueue, { agent, toolApproval: { comment: 'user-approval' } }, async () => {
      const handle = await startAgentRun(client, { agent: 'responder', prompt: `Answer issue ${issue}`, taskQueue });
      while ((await listPendingApprovals(client, handle.workflowId)).length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await decideApproval(client, handle.workflowId, {
        toolCallId: 'call-0-0',
        approved: true,
        approver: 'bob',
        secret: SECRET,
      });
      return handle.result();
    });
    const all = finished();
    process.stdout.write(`--- the spans of a run with an approval ---\n${printTree(all)}\n`);
    // The run's trace; the client's query and update calls (the test's polling, the decision, the
    // progress query that looks for sub-agent runs waiting too) are traces of their own.
    const spans = all.filter((s) => s.traceId === only(all, 'RunWorkflow:agentWorkflow').traceId);
    const theirs = new Set(all.filter((s) => !spans.includes(s)).map((s) => s.name));
    expect([...theirs].sort()).toEqual([
      'HandleUpdate:chamvi.decideApproval',
      'QueryWorkflow:chamvi.pendingApprovals',
      'QueryWorkflow:chamvi.progress',
      'RunActivity:chamvi.verifyApproval',
      'StartActivity:chamvi.verifyApproval',
      'StartWorkflowUpdate:chamvi.decideApproval',
      'ValidateUpdate:chamvi.decideApproval',
    ]);
    const approval = only(spans, 'chamvi.approval comment');
    expect(parentOf(spans, approval)).toBe(only(spans, 'invoke_agent responder'));
    expect(approval.attributes).toMatchObject({
      'chamvi.approval.approved': true,
      'chamvi.approval.decided_by': 'approver',
      'chamvi.approval.approver': 'bob',
      'chamvi.step': 0,
      'gen_ai.tool.call.id': 'call-0-0',
    });
    expect(approval.events.map((e) => e.name)).toEqual(['requested', 'decided']);
    expect(only(spans, 'chamvi.effect comment').attributes).toMatchObject({
      'chamvi.approval.decided_by': 'approver',
      'chamvi.effect.outcome': 'executed',
    });
  });

  it('an approval nobody gives in time is a span that timed out, and the denied call has no effect span', async () => {
    const issue = openIssue(github);
    const agent = createResponder({ githubUrl: github.url, model: twoSteps(issue) });
    const { result } = await run(issue, {
      agent,
      toolApproval: { comment: 'user-approval' },
      approvalTimeout: '1 second',
    });
    expect(result.effects).toEqual([expect.objectContaining({ outcome: 'denied' })]);
    const spans = finished();
    const approval = only(spans, 'chamvi.approval comment');
    expect(approval.attributes).toMatchObject({
      'chamvi.approval.approved': false,
      'chamvi.approval.decided_by': 'timeout',
      'chamvi.effect.outcome': 'denied',
    });
    expect(approval.events.map((e) => e.name)).toEqual(['requested', 'timed out']);
    expect(approval.endMs - approval.startMs).toBeGreaterThanOrEqual(1000);
    expect(named(spans, 'chamvi.effect comment')).toEqual([]);
    expect(countByName(spans)['invoke_agent responder']).toBe(1);
  });

  it('a run that continues as new stays one trace and one agent run: the last execution reports every step', async () => {
    const issue = openIssue(github);
    const taskQueue = `tracing-${randomUUID()}`;
    const agent = createResponder({ githubUrl: github.url, model: twoSteps(issue) });
    await withWorker(taskQueue, { agent }, async () => {
      const handle = await startAgentRun(client, {
        agent: 'responder',
        prompt: `Answer issue ${issue}`,
        taskQueue,
        continueAsNewAfterSteps: 1,
      });
      return handle.result();
    });
    const spans = finished();
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(countByName(spans)).toEqual({
      ...twoStepCounts(1),
      'RunWorkflow:agentWorkflow': 2,
      'ContinueAsNew:agentWorkflow': 1,
    });
    expectOneAgentRun(spans);
    const executions = named(spans, 'RunWorkflow:agentWorkflow');
    expect(only(spans, 'invoke_agent responder').startMs).toBeLessThanOrEqual(executions[0]?.endMs ?? 0);
  });

  it('a run that fails ends its agent-run span and the step it failed in with the failure, the failed model call too', async () => {
    const issue = openIssue(github);
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'comment', input: { issue, body: 'Thanks for the report!' } }] },
      () => {
        throw new APICallError({
          message: 'Incorrect API key',
          url: 'http://model',
          requestBodyValues: {},
          statusCode: 401,
        });
      },
    ]);
    const failed = await run(issue, { agent: createResponder({ githubUrl: github.url, model }) }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeDefined();
    const spans = finished();
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const agentRun = only(spans, 'invoke_agent responder');
    const [first, second] = named(spans, 'chat scripted');
    expect([only(spans, 'step 1').status.code, only(spans, 'step 2').status.code]).toEqual([0, 2]);
    expect([first?.status.code, second?.status.code]).toEqual([0, 2]);
    expect(parentOf(spans, second as SpanRecord)).toBe(only(spans, 'step 2'));
    expect(agentRun.status.code).toBe(2);
    expect(agentRun.events).toEqual([
      expect.objectContaining({
        name: 'exception',
        attributes: expect.objectContaining({ 'exception.type': 'ModelCallRejectedError' }),
      }),
    ]);
  });

  it('a run cancelled while it waits for an approval ends its agent-run and step spans as aborted, not failed', async () => {
    const issue = openIssue(github);
    const taskQueue = `tracing-${randomUUID()}`;
    const agent = createResponder({ githubUrl: github.url, model: twoSteps(issue) });
    await withWorker(taskQueue, { agent, toolApproval: { comment: 'user-approval' } }, async () => {
      const handle = await startAgentRun(client, { agent: 'responder', prompt: `Answer issue ${issue}`, taskQueue });
      while ((await listPendingApprovals(client, handle.workflowId)).length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await handle.cancel();
      await expect(handle.result()).rejects.toThrow();
    });
    const spans = finished().filter((s) => s.traceId === only(finished(), 'RunWorkflow:agentWorkflow').traceId);
    expect(countByName(spans)).toMatchObject({ 'invoke_agent responder': 1, 'step 1': 1, 'chat scripted': 1 });
    expect(parentOf(spans, only(spans, 'step 1'))).toBe(only(spans, 'invoke_agent responder'));
    expect([only(spans, 'invoke_agent responder').status.code, only(spans, 'step 1').status.code]).toEqual([0, 0]);
    expect(named(spans, 'chamvi.approval comment')).toEqual([]);
  });

  it('after a SIGKILL in the crash window, the retry on the survivor is the only effect span, and every other span is there once', async () => {
    const issue = openIssue(github);
    const taskQueue = `tracing-${randomUUID()}`;
    const files = {
      doomed: join(dir, `doomed-${randomUUID()}.jsonl`),
      survivor: join(dir, `survivor-${randomUUID()}.jsonl`),
    };
    const common = {
      TEMPORAL_ADDRESS: env.address,
      TASK_QUEUE: taskQueue,
      GITHUB_URL: github.url,
      ISSUE: String(issue),
      STORE: `sqlite:${join(dir, `effects-${randomUUID()}.db`)}`,
    };
    const doomed = await spawnWorker(TRACING_WORKER, {
      ...common,
      SPANS: files.doomed,
      SERVICE: 'doomed',
      CRASH: 'after-comment',
    });
    const handle = await startAgentRun(client, { agent: 'responder', prompt: `Answer issue ${issue}`, taskQueue });
    expect(await doomed.exited).toBe('SIGKILL');
    const survivor: SpawnedWorker = await spawnWorker(TRACING_WORKER, {
      ...common,
      SPANS: files.survivor,
      SERVICE: 'survivor',
    });
    const result = await handle.result();
    await survivor.stop();
    expect(commentsOn(github, issue)).toBe(1);
    expect(result.effects).toEqual([expect.objectContaining({ outcome: 'reconciled', attempts: 2 })]);

    const spans = [...finished(), ...readSpanFile(files.doomed), ...readSpanFile(files.survivor)];
    process.stdout.write(
      `--- the spans of run ${handle.workflowId}, SIGKILL in the crash window ---\n${printTree(spans)}\n`,
    );
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    // The killed attempt's spans never ended: they died with its process.
    expect(countByName(spans)).toEqual(twoStepCounts(1));
    expectOneAgentRun(spans);
    const served = (name: string) => named(spans, name).map((s) => s.service);
    expect(served('chat scripted')).toEqual(['doomed', 'survivor']);
    expect(served('invoke_agent responder')).toEqual(['survivor']);
    expect(served('StartActivity:chamvi.modelStep')).toEqual(['doomed', 'survivor']);

    const effect = only(spans, 'chamvi.effect comment');
    expect(effect.service).toBe('survivor');
    expect(effect.attributes).toMatchObject({
      'chamvi.effect.attempt': 2,
      'chamvi.effect.outcome': 'reconciled',
      'chamvi.effect.fence': 2,
    });
    expect(effect.events).toEqual([
      { name: 'claim', attributes: { result: 'takeover', fence: 2 } },
      { name: 'alreadyApplied', attributes: { result: 'found' } },
      { name: 'record', attributes: { result: 'done' } },
    ]);
    // The attempt's log line carries the ids of its effect span.
    const lines = logLines(survivor).filter((line) => line.meta['outcome'] === 'reconciled');
    expect(lines).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^effect comment reconciled on attempt 2/),
        meta: expect.objectContaining({ trace_id: effect.traceId, span_id: effect.spanId }),
      }),
    ]);
  }, 90_000);
});
