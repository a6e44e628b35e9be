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
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { startDevServer } from './bench-server.js';
import {
  concurrentRound,
  createSideWorker,
  median,
  runOnce as runSide,
  type Flavour,
  type RoundResult,
} from './bench-sides.js';
import { startRemote } from './history-remote.js';

// CommonJS: its namespace comes through the default export under ESM.
const { temporal } = proto;
type IPayload = proto.temporal.api.common.v1.IPayload;

Runtime.install({ logger: new DefaultLogger('WARN') });

const STEP_COUNTS = (process.env['BENCH_STEPS'] ?? '1,3,10,20,40').split(',').map(Number);
const CONCURRENT = Number(process.env['BENCH_CONCURRENT'] ?? 100);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const STORE = process.env['BENCH_STORE'] ?? 'memory:';
const THROUGHPUT_STEPS = 3;

type Side = Flavour;
const SIDES: readonly Side[] = ['library', 'anchor', 'floor'];
// Throughput of these sides only (BENCH_SIDES=library, say, to profile one side); sizes are always measured.
const THROUGHPUT_SIDES = (process.env['BENCH_SIDES'] ?? SIDES.join(',')).split(',') as Side[];

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
const workers = {} as Record<Side, Worker>;
for (const side of SIDES)
  workers[side] = await createSideWorker(side, {
    connection,
    taskQueue: queues[side],
    remoteUrl: remote.url,
    store: STORE,
  });

const runOnce = (side: Side, comments: number) => runSide(client, remote, side, queues[side], comments);
const throughput = (side: Side) => concurrentRound(CONCURRENT, () => runOnce(side, THROUGHPUT_STEPS));

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
  const results: Record<Side, RoundResult[]> = {
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
  await server.stop();
}
