// Benchmark (not a test): event-history size and throughput of one agent, three ways, on one
// Temporal dev server in one process.
//   npm run bench:history        (node --import tsx bench/history.ts)
// The agent: "post N comments on issue #I, one per step, then stop" (N comment steps + 1 text
// step), the model scripted (bench/history-script.ts), the comments posted to a local GitHub
// server. Sides:
//   library  this library's agentWorkflow, the comment an effect tool (step-keyed effect key,
//            marker + alreadyApplied), effect store BENCH_STORE (default memory:)
//   anchor   @temporalio/ai-sdk: generateText in the workflow, model calls through its
//            invokeModel activity, the comment a plain activity (bench/history-anchor-workflows.ts)
//   floor    bare Temporal: the same loop with canned model answers and minimal activity
//            inputs (bench/history-floor-workflows.ts)
// History bytes = the run's event history as the server sends it (fetchHistory, every page,
// re-encoded as a temporal.api.history.v1.History protobuf; summed over a continue-as-new chain).
// Env: BENCH_STEPS (default 1,3,10,20,40), BENCH_CONCURRENT (100), BENCH_ROUNDS (3), BENCH_SIDES (throughput of these),
// BENCH_STORE (memory:), TEMPORAL_CLI_PATH.
import type { ProviderV4 } from '@ai-sdk/provider';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineAgent, defineEffectTool, effectMarker, findEffectMarkers, stepIndex } from '../src/index.js';
import { findTemporalBinary } from '../testing/temporal-binaries.js';
import { createAgentWorker } from '../worker/index.js';
import { startAgentRun } from '../client/index.js';
import { answerFor, benchModel, MAX_COMMENT_STEPS, promptFor } from './history-script.js';
import { BOT, listComments, openIssue, postComment, remoteActivities, startRemote } from './history-remote.js';

// CommonJS: its namespace comes through the default export under ESM.
const { temporal } = proto;
type IPayload = proto.temporal.api.common.v1.IPayload;

Runtime.install({ logger: new DefaultLogger('WARN') });

const STEP_COUNTS = (process.env['BENCH_STEPS'] ?? '1,3,10,20,40').split(',').map(Number);
const CONCURRENT = Number(process.env['BENCH_CONCURRENT'] ?? 100);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const STORE = process.env['BENCH_STORE'] ?? 'memory:';
const THROUGHPUT_STEPS = 3;
const INSTRUCTIONS = 'Post the comments you are asked for, one per step, then stop.';
const WORKER_OPTIONS = { maxConcurrentActivityTaskExecutions: 200, maxConcurrentWorkflowTaskExecutions: 200 };

type Side = 'library' | 'anchor' | 'floor';
const SIDES: readonly Side[] = ['library', 'anchor', 'floor'];
// Throughput of these sides only (BENCH_SIDES=library, say, to profile one side); sizes are always measured.
const THROUGHPUT_SIDES = (process.env['BENCH_SIDES'] ?? SIDES.join(',')).split(',') as Side[];

// ---------------------------------------------------------------------------------------------
// One dev server on free ports, stopped at the end.

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function startDevServer(): Promise<{ address: string; child: ChildProcess }> {
  const binary = findTemporalBinary('cli');
  if (binary === undefined)
    throw new Error('No temporal CLI found: set TEMPORAL_CLI_PATH or run scripts/dev.sh install.');
  const [port, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
    binary,
    [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--http-port',
      String(httpPort),
      '--metrics-port',
      String(metricsPort),
      '--log-level',
      'error',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const address = `127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return { address, child };
    } catch (error) {
      if (Date.now() > deadline || child.exitCode !== null) throw error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// History size of one run (every execution of its continue-as-new chain).

interface HistorySize {
  bytes: number;
  events: number;
  executions: number;
  largestPayload: number;
}

function payloadsIn(value: unknown, found: IPayload[]): void {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
  if (Array.isArray(value)) {
    for (const item of value) payloadsIn(item, found);
    return;
  }
  const record = value as Record<string, unknown>;
  if (record['data'] instanceof Uint8Array && 'metadata' in record) {
    found.push(record);
    return;
  }
  for (const key of Object.keys(record)) payloadsIn(record[key], found);
}

async function historySize(client: Client, workflowId: string, firstRunId: string): Promise<HistorySize> {
  const size: HistorySize = { bytes: 0, events: 0, executions: 0, largestPayload: 0 };
  let runId: string | undefined = firstRunId;
  while (runId !== undefined) {
    const history: proto.temporal.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    size.bytes += temporal.api.history.v1.History.encode(history).finish().length;
    size.events += history.events?.length ?? 0;
    size.executions++;
    const payloads: IPayload[] = [];
    payloadsIn(history.events, payloads);
    for (const p of payloads)
      size.largestPayload = Math.max(size.largestPayload, temporal.api.common.v1.Payload.encode(p).finish().length);
    const last: proto.temporal.api.history.v1.IHistoryEvent | undefined = history.events?.[history.events.length - 1];
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return size;
}

// ---------------------------------------------------------------------------------------------

const server = await startDevServer();
const remote = await startRemote();
const connection = await NativeConnection.connect({ address: server.address });
const clientConnection = await Connection.connect({ address: server.address });
const client = new Client({ connection: clientConnection });
const queues: Record<Side, string> = {
  library: `bench-history-library-${randomUUID()}`,
  anchor: `bench-history-anchor-${randomUUID()}`,
  floor: `bench-history-floor-${randomUUID()}`,
};

const comment = defineEffectTool({
  description: 'Posts a comment on the issue.',
  inputSchema: z.object({ issue: z.number(), body: z.string() }),
  // Keyed by model step (the spec's example for a redone step), so it reads options.messages.
  effectKey: ({ issue }, ctx, options) => `${ctx.run.runId}:comment:${issue}:${stepIndex(options)}`,
  alreadyApplied: async (key, { issue }) => {
    const found = (await listComments(remote.url, issue)).find(
      (c) => c.login === BOT && findEffectMarkers(c.body).includes(key),
    );
    return found === undefined ? undefined : { id: found.id };
  },
  execute: async ({ issue, body }, { context, messages }) => {
    const key = `${context.run.runId}:comment:${issue}:${stepIndex({ messages })}`;
    return postComment(remote.url, { issue, body: `${body}\n${effectMarker(key)}` });
  },
});
const agent = defineAgent({
  name: 'bench-history',
  model: benchModel(),
  instructions: INSTRUCTIONS,
  maxSteps: MAX_COMMENT_STEPS + 1,
  tools: { comment },
});

const anchorModel = benchModel();
const none = (): never => {
  throw new Error('only language models here');
};
const provider = {
  specificationVersion: 'v4',
  languageModel: () => anchorModel,
  embeddingModel: none,
  imageModel: none,
};

const workers: Record<Side, Worker> = {
  library: await createAgentWorker({
    connection,
    taskQueue: queues.library,
    agents: [agent],
    store: STORE,
    health: false,
    workerOptions: WORKER_OPTIONS,
  }),
  anchor: await Worker.create({
    ...WORKER_OPTIONS,
    connection,
    taskQueue: queues.anchor,
    workflowsPath: fileURLToPath(new URL('./history-anchor-workflows.ts', import.meta.url)),
    activities: remoteActivities(remote.url),
    plugins: [new AiSdkPlugin({ modelProvider: provider as unknown as ProviderV4 })],
  }),
  floor: await Worker.create({
    ...WORKER_OPTIONS,
    connection,
    taskQueue: queues.floor,
    workflowsPath: fileURLToPath(new URL('./history-floor-workflows.ts', import.meta.url)),
    activities: {
      ...remoteActivities(remote.url),
      cannedModelStep: async ({ issue, comments, step }: { issue: number; comments: number; step: number }) =>
        answerFor(step, issue, comments),
    },
  }),
};

/** One run of `comments` comment steps, to completion: its wall time, workflow id and first run id. */
async function runOnce(side: Side, comments: number): Promise<{ ms: number; workflowId: string; runId: string }> {
  const issue = openIssue(remote);
  const workflowId = `bench-${side}-${randomUUID()}`;
  const prompt = promptFor(issue, comments);
  const started = performance.now();
  const handle =
    side === 'library'
      ? await startAgentRun(client, { agent: agent.name, prompt, taskQueue: queues.library, workflowId })
      : await client.workflow.start(side === 'anchor' ? 'anchorWorkflow' : 'floorWorkflow', {
          taskQueue: queues[side],
          workflowId,
          args: [{ issue, comments, prompt, instructions: INSTRUCTIONS }],
        });
  await handle.result();
  const ms = performance.now() - started;
  // Every side must have done the same work: one comment per comment step.
  const posted = remote.tracker.listComments('acme', 'widgets', issue)?.length ?? 0;
  if (posted !== comments) throw new Error(`${side}: a ${comments}-step run posted ${posted} comments`);
  return { ms, workflowId, runId: handle.firstExecutionRunId };
}

async function throughput(side: Side): Promise<{ runsPerSecond: number; p50: number; p99: number }> {
  const started = performance.now();
  const latencies = await Promise.all(
    Array.from({ length: CONCURRENT }, async () => (await runOnce(side, THROUGHPUT_STEPS)).ms),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? NaN;
  return { runsPerSecond: CONCURRENT / seconds, p50: at(0.5), p99: at(0.99) };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').replace(/,/g, ' ');

async function measure(): Promise<void> {
  // Warm-up: bundles loaded, connections open, JIT warm on every side.
  for (let i = 0; i < 3; i++) await Promise.all(SIDES.map((side) => runOnce(side, THROUGHPUT_STEPS)));

  const sizes = new Map<string, HistorySize>();
  for (const steps of STEP_COUNTS) {
    for (const side of SIDES) {
      const run = await runOnce(side, steps);
      sizes.set(`${side}:${steps}`, await historySize(client, run.workflowId, run.runId));
    }
  }
  console.log(`store: ${STORE}; a run of N steps = N comment steps + 1 final text step`);
  console.log('');
  console.log(
    '| steps per run | this library, history bytes/run | @temporalio/ai-sdk | bare floor | library / anchor | events (lib / anchor / floor) | largest payload, bytes (lib / anchor / floor) | executions (lib) |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const steps of STEP_COUNTS) {
    const [lib, anc, flo] = SIDES.map((side) => sizes.get(`${side}:${steps}`) as HistorySize) as [
      HistorySize,
      HistorySize,
      HistorySize,
    ];
    console.log(
      `| ${steps} | ${fmt(lib.bytes)} | ${fmt(anc.bytes)} | ${fmt(flo.bytes)} | ${(lib.bytes / anc.bytes).toFixed(2)} | ${lib.events} / ${anc.events} / ${flo.events} | ${fmt(lib.largestPayload)} / ${fmt(anc.largestPayload)} / ${fmt(flo.largestPayload)} | ${lib.executions} |`,
    );
  }
  const bytes = (side: Side, steps: number) => sizes.get(`${side}:${steps}`)?.bytes ?? NaN;
  if ([10, 20, 40].every((s) => STEP_COUNTS.includes(s))) {
    console.log('');
    for (const side of SIDES) {
      const late = bytes(side, 40) - bytes(side, 20);
      const early = bytes(side, 20) - bytes(side, 10);
      console.log(
        `- growth ${side}: bytes(40) - bytes(20) = ${fmt(late)}; (bytes(20) - bytes(10)) x 2 = ${fmt(early * 2)}; ratio ${(late / (early * 2)).toFixed(2)} (linear: <= 1.2)`,
      );
    }
  }

  console.log('');
  const results: Record<Side, Array<{ runsPerSecond: number; p50: number; p99: number }>> = {
    library: [],
    anchor: [],
    floor: [],
  };
  // A round of each side first, not counted (the sizes phase leaves the server and this process
  // busy for a while), then interleaved rounds whose order rotates, so that neither machine noise
  // nor going first or last favours a side.
  for (const side of THROUGHPUT_SIDES) await throughput(side);
  for (let round = 0; round < ROUNDS; round++) {
    const order = THROUGHPUT_SIDES.map((_, i) => THROUGHPUT_SIDES[(i + round) % THROUGHPUT_SIDES.length] as Side);
    for (const side of order) results[side].push(await throughput(side));
  }
  console.log(
    `| ${CONCURRENT} concurrent ${THROUGHPUT_STEPS}-step runs, one worker | runs/s per round | best runs/s | p50 / p99 ms (best round) |`,
  );
  console.log('| --- | --- | --- | --- |');
  const best = (side: Side) => results[side].reduce((a, b) => (b.runsPerSecond > a.runsPerSecond ? b : a));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
  for (const side of THROUGHPUT_SIDES) {
    const b = best(side);
    console.log(
      `| ${side} | ${results[side].map((r) => r.runsPerSecond.toFixed(1)).join(', ')} | ${b.runsPerSecond.toFixed(1)} | ${fmt(b.p50)} / ${fmt(b.p99)} |`,
    );
  }
  if (THROUGHPUT_SIDES.length < SIDES.length) return;
  // Paired by round (the same minutes of machine load), the median of the rounds' ratios.
  const ratios = (other: Side) =>
    results.library.map((r, i) => r.runsPerSecond / (results[other][i]?.runsPerSecond ?? NaN));
  const show = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
  console.log('');
  console.log(
    `- throughput library / anchor per round ${show(ratios('anchor'))}: median ${median(ratios('anchor')).toFixed(2)} (goal >= 1.2); best / best ${(best('library').runsPerSecond / best('anchor').runsPerSecond).toFixed(2)}`,
  );
  console.log(
    `- throughput library / floor per round ${show(ratios('floor'))}: median ${median(ratios('floor')).toFixed(2)} (goal >= 0.85); best / best ${(best('library').runsPerSecond / best('floor').runsPerSecond).toFixed(2)}`,
  );
}

try {
  const measuring = measure();
  await Promise.all(SIDES.map((side) => workers[side].runUntil(measuring)));
} finally {
  await connection.close();
  await clientConnection.close();
  await remote.stop();
  server.child.kill('SIGTERM');
  if (server.child.exitCode === null) await new Promise((resolve) => server.child.once('exit', resolve));
}
