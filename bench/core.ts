// Benchmark (not a test): the engine-agnostic core, in one process, on the compiled output.
//   npm run bench:core      (= tsc -p bench/tsconfig.core.json && node dist/bench/core.js)
// 1. A generateText run with one tool call (two model steps, MockLanguageModelV4), its tool an
//    effect tool wrapped by wrapToolsForRun (a fresh run each time, so the execute path) vs the same
//    tool unwrapped. Target: wrapped/unwrapped <= 1.05.
// 2. The recorded path per call (the store holds the result). Target: <= 15 µs.
// 3. The execute path's overhead per call over calling the raw execute. Target: <= 25 µs.
// Each measurement warms up first, then runs interleaved rounds and reports the median round.
// Times are this process's CPU time (process.cpuUsage: user + system), not wall time: the machine
// is shared, and CPU time does not count the time other processes hold the cores. BENCH_CLOCK=wall
// measures wall time instead.
import { generateText, isStepCount, tool, type ToolExecutionOptions } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import {
  createToolContext,
  defineEffectTool,
  MemoryEffectStore,
  wrapToolsForRun,
  type ToolContext,
} from '../src/index.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 31);
const RUNS_PER_ROUND = Number(process.env['BENCH_RUNS'] ?? 100);
const CALLS_PER_ROUND = Number(process.env['BENCH_CALLS'] ?? 2000);
const WALL = process.env['BENCH_CLOCK'] === 'wall';

/** Milliseconds on the chosen clock. */
function now(): number {
  if (WALL) return performance.now();
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** Step 1 calls the tool, step 2 (after the tool result) answers with text. Stateless, so one model serves every run. */
function makeModel() {
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      model.doGenerateCalls.length = 0; // keep the mock from growing over thousands of runs
      const last = options.prompt[options.prompt.length - 1];
      if (last?.role === 'tool') {
        return {
          content: [{ type: 'text', text: 'Done.' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        };
      }
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: 'call-1',
            toolName: 'notify',
            input: JSON.stringify({ issue: 7, body: 'hello' }),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  return model;
}

const inputSchema = z.object({ issue: z.number(), body: z.string() });
const execute = async ({ issue, body }: { issue: number; body: string }) => ({ id: issue, length: body.length });
const plainTool = tool({ description: 'Notify.', inputSchema, execute });
const effectTool = defineEffectTool({ description: 'Notify.', inputSchema, execute });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const fmt = (n: number, digits = 2) => n.toFixed(digits);

// ---------------------------------------------------------------- 1. generateText wrapped vs unwrapped
const model = makeModel();
let runSeq = 0;
const store = new MemoryEffectStore();

async function unwrappedRun(): Promise<void> {
  const ctx = createToolContext({ runId: `plain-${++runSeq}`, agent: 'bench' });
  const r = await generateText({
    model,
    tools: { notify: plainTool },
    toolsContext: { notify: ctx } as never, // the same context handed over as in the wrapped run
    prompt: 'go',
    stopWhen: isStepCount(3),
  });
  if (r.text !== 'Done.') throw new Error('unexpected run result');
}

async function wrappedRun(): Promise<void> {
  const ctx = createToolContext({ runId: `effect-${++runSeq}`, agent: 'bench' });
  const tools = wrapToolsForRun({ notify: effectTool }, ctx, store);
  const r = await generateText({ model, tools, toolsContext: { notify: ctx }, prompt: 'go', stopWhen: isStepCount(3) });
  if (r.text !== 'Done.') throw new Error('unexpected run result');
}

/** The same run again (same runId, same store): the effect call takes the recorded path. */
const replayCtx = createToolContext({ runId: 'replay', agent: 'bench' });
async function replayRun(): Promise<void> {
  const tools = wrapToolsForRun({ notify: effectTool }, replayCtx, store);
  const r = await generateText({
    model,
    tools,
    toolsContext: { notify: replayCtx },
    prompt: 'go',
    stopWhen: isStepCount(3),
  });
  if (r.text !== 'Done.') throw new Error('unexpected run result');
}

async function timeRuns(fn: () => Promise<void>, n: number): Promise<number> {
  const t0 = now();
  for (let i = 0; i < n; i++) await fn();
  return (now() - t0) / n; // ms per run
}

// ---------------------------------------------------------------- 2./3. per-call paths
type Exec = (input: unknown, options: ToolExecutionOptions<ToolContext>) => Promise<unknown>;
const benchCtx = createToolContext({ runId: 'bench-calls', agent: 'bench' });
const options: ToolExecutionOptions<ToolContext> = { toolCallId: 'call-1', messages: [], context: benchCtx };

async function recordedPerCall(n: number): Promise<number> {
  const s = new MemoryEffectStore();
  const wrapped = wrapToolsForRun({ notify: effectTool }, benchCtx, s).notify.execute as unknown as Exec;
  const input = { issue: 7, body: 'hello' };
  await wrapped(input, options); // records it
  const t0 = now();
  for (let i = 0; i < n; i++) await wrapped(input, options);
  return ((now() - t0) * 1000) / n; // µs per call
}

const inputs = Array.from({ length: CALLS_PER_ROUND }, (_, i) => ({ issue: i, body: 'hello' }));

async function executePerCall(n: number): Promise<{ wrapped: number; raw: number }> {
  // a fresh store per round: every call is a new key, so each one claims, executes and records
  const s = new MemoryEffectStore();
  const ctx = createToolContext({ runId: `exec-${++runSeq}`, agent: 'bench' });
  const wrapped = wrapToolsForRun({ notify: effectTool }, ctx, s).notify.execute as unknown as Exec;
  const raw = effectTool.execute as unknown as Exec;
  const opts = { ...options, context: ctx };
  let t0 = now();
  for (let i = 0; i < n; i++) await raw(inputs[i], opts);
  const rawUs = ((now() - t0) * 1000) / n;
  t0 = now();
  for (let i = 0; i < n; i++) await wrapped(inputs[i], opts);
  const wrappedUs = ((now() - t0) * 1000) / n;
  return { wrapped: wrappedUs, raw: rawUs };
}

// ---------------------------------------------------------------- run
console.log(
  `@chamvi/temporal core benchmark — node ${process.version}, ${WALL ? 'wall' : 'CPU'} time, ${ROUNDS} rounds (median reported)`,
);

// warm-up: JIT every path
for (let i = 0; i < 300; i++) {
  await unwrappedRun();
  await wrappedRun();
  await replayRun();
}
await recordedPerCall(5000);
await executePerCall(CALLS_PER_ROUND);

const ratios: number[] = [];
const replayRatios: number[] = [];
const plainMs: number[] = [];
const effectMs: number[] = [];
const replayMs: number[] = [];
const sides = [unwrappedRun, wrappedRun, replayRun];
for (let r = 0; r < ROUNDS; r++) {
  // rotate the order so drift and GC hit every side alike
  const times = [0, 0, 0];
  for (let k = 0; k < sides.length; k++) {
    const side = (r + k) % sides.length;
    times[side] = await timeRuns(sides[side] as () => Promise<void>, RUNS_PER_ROUND);
  }
  const [plain, effect, replay] = times as [number, number, number];
  plainMs.push(plain);
  effectMs.push(effect);
  replayMs.push(replay);
  ratios.push(effect / plain);
  replayRatios.push(replay / plain);
}

const recorded: number[] = [];
const execWrapped: number[] = [];
const execRaw: number[] = [];
const overhead: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  recorded.push(await recordedPerCall(CALLS_PER_ROUND));
  const e = await executePerCall(CALLS_PER_ROUND);
  execWrapped.push(e.wrapped);
  execRaw.push(e.raw);
  overhead.push(e.wrapped - e.raw);
}

const rows = [
  {
    measure: 'generateText, 1 tool call: wrapped / unwrapped',
    result: `${fmt(median(ratios), 3)} (${fmt(median(effectMs) * 1000, 0)} µs vs ${fmt(median(plainMs) * 1000, 0)} µs per run)`,
    target: '<= 1.05',
    ok: median(ratios) <= 1.05,
  },
  {
    measure: 'recorded path, per call',
    result: `${fmt(median(recorded))} µs`,
    target: '<= 15 µs',
    ok: median(recorded) <= 15,
  },
  {
    measure: 'execute path overhead over raw execute, per call',
    result: `${fmt(median(overhead))} µs (${fmt(median(execWrapped))} µs wrapped, ${fmt(median(execRaw))} µs raw)`,
    target: '<= 25 µs',
    ok: median(overhead) <= 25,
  },
];
console.log(
  `info  generateText, 1 tool call, replayed (same runId: the recorded path): ${fmt(median(replayRatios), 3)} ` +
    `(${fmt(median(replayMs) * 1000, 0)} µs per run)`,
);
for (const row of rows)
  console.log(`${row.ok ? 'PASS' : 'MISS'}  ${row.measure}: ${row.result}  (target ${row.target})`);
console.log(
  `spread over rounds: ratio ${fmt(Math.min(...ratios), 3)}..${fmt(Math.max(...ratios), 3)}, ` +
    `replay ratio ${fmt(Math.min(...replayRatios), 3)}..${fmt(Math.max(...replayRatios), 3)}, ` +
    `recorded ${fmt(Math.min(...recorded))}..${fmt(Math.max(...recorded))} µs, ` +
    `overhead ${fmt(Math.min(...overhead))}..${fmt(Math.max(...overhead))} µs`,
);
if (rows.some((r) => !r.ok)) process.exitCode = 1;
