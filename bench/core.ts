// Benchmark (not a test): the engine-agnostic core, in one process, on the compiled output.
//   npm run bench:core      (= tsc -p bench/tsconfig.core.json && node dist/bench/core.js)
// 1. A generateText run with one tool call (two model steps, MockLanguageModelV4), its tool an
//    effect tool wrapped by wrapToolsForRun (a fresh run each time, so the execute path) vs the same
//    tool unwrapped. Target: wrapped/unwrapped <= 1.05. Two runs are measured: the smallest possible
//    one (a two-letter prompt, one tool) and an agent-sized one (instructions, an issue as the prompt,
//    four tools of which one is the effect tool). Beside them, for scale: the same run replayed (the
//    recorded path), a hand-written floor: a wrapper that only computes the default key (SHA-256
//    of the canonical input) and keeps results in a Map (no claims, no records, no reports), and the
//    default key alone (computed, nothing looked up).
// 2. The recorded path per call (the store holds the result). Target: <= 15 µs.
// 3. The execute path's overhead per call over calling the raw execute. Target: <= 25 µs.
// Runs are timed in batches of BENCH_BATCH; the sides' batches are interleaved, their order rotated
// every round, and each side's median batch is compared (the ratio of medians). Times are this
// process's CPU time (process.cpuUsage: user + system, GC threads included), not wall time: the
// machine is shared, and CPU time does not count the time other processes hold the cores.
// BENCH_CLOCK=wall measures wall time instead.
import { hash } from 'node:crypto';
import { generateText, isStepCount, tool, type ToolExecutionOptions, type ToolSet } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { defaultEffectKey, defineEffectTool, type ToolContext } from '../src/index.js';
import { canonicalJson } from '../src/json/canonical-json.js';
import { createToolContext } from '../src/context/tool-context.js';
import { MemoryEffectStore } from '../src/stores/index.js';
import { wrapToolsForRun } from '../src/agent/wrap-tools-for-run.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 300);
const BATCH = Number(process.env['BENCH_BATCH'] ?? 10);
const CALL_ROUNDS = Number(process.env['BENCH_CALL_ROUNDS'] ?? 31);
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

/**
 * Step 1 calls `toolName` with `input`, step 2 (after the tool result) answers with text.
 * Stateless, so one model serves every run.
 */
function scriptedModel(toolName: string, input: unknown) {
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
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  return model;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const fmt = (n: number, digits = 2) => n.toFixed(digits);

// ---------------------------------------------------------------- 1. generateText wrapped vs unwrapped
/** One shape of run: its model, prompt and tools; `tools(effect)` builds the tool set around the called tool. */
interface Scenario {
  readonly model: ReturnType<typeof scriptedModel>;
  readonly instructions?: string;
  readonly prompt: string;
  readonly tools: (called: ToolSet[string]) => ToolSet;
  readonly called: string;
  readonly plainTool: ToolSet[string];
  readonly effectTool: ToolSet[string];
}

const notifyInput = z.object({ issue: z.number(), body: z.string() });
const notify = async ({ issue, body }: { issue: number; body: string }) => ({ id: issue, length: body.length });

const minimal: Scenario = {
  model: scriptedModel('notify', { issue: 7, body: 'hello' }),
  prompt: 'go',
  tools: (called) => ({ notify: called }),
  called: 'notify',
  plainTool: tool({ description: 'Notify.', inputSchema: notifyInput, execute: notify }),
  effectTool: defineEffectTool({ description: 'Notify.', inputSchema: notifyInput, execute: notify }),
};

const commentInput = z.object({
  issue: z.number().int().positive().describe('Issue number'),
  body: z.string().min(1).max(65_536).describe('Markdown body of the comment'),
});
const postComment = async ({ issue, body }: { issue: number; body: string }) => ({
  id: issue * 1000 + 1,
  url: `https://github.invalid/issues/${issue}#issuecomment-${issue * 1000 + 1}`,
  length: body.length,
});
const agentTools = {
  readIssue: tool({
    description: 'Reads an issue: title, body, labels and the last 20 comments.',
    inputSchema: z.object({ issue: z.number().int().positive().describe('Issue number') }),
    execute: async ({ issue }) => ({ issue, title: '', body: '', labels: [] as string[] }),
  }),
  searchDocs: tool({
    description: 'Searches the documentation and returns the best matching sections.',
    inputSchema: z.object({
      query: z.string().min(2).describe('What to look for'),
      limit: z.number().max(20).optional(),
    }),
    execute: async ({ query }) => [{ title: query, url: 'https://docs.invalid' }],
  }),
  addLabel: tool({
    description: 'Adds a label to an issue.',
    inputSchema: z.object({ issue: z.number().int(), label: z.enum(['bug', 'question', 'feature']) }),
    execute: async ({ issue, label }) => ({ issue, label }),
  }),
};
const agentSized: Scenario = {
  model: scriptedModel('postComment', {
    issue: 7,
    body: 'Thanks for the report! Could you share the smallest workflow that shows it, and which store you use?',
  }),
  instructions:
    'You triage new issues of the chamvi repository. Read the issue, decide whether it is a bug, a feature request ' +
    'or a question, and answer with one short comment that says what happens next. Label bugs "bug" and questions ' +
    '"question". Never promise dates. When a bug report lacks a reproduction, ask for the Node version, the Temporal ' +
    'server version, the effect store in use and the smallest workflow that shows the problem. Be brief and specific.',
  prompt:
    'Issue #7: comments posted twice after a worker restart\n\n' +
    'When the worker is killed right after the comment tool returns, the retried activity posts the same comment ' +
    'again. Steps: start the dev server, run the triage agent on an issue, kill -9 the worker while the comment ' +
    'activity runs, start a new worker. Expected one comment, got two. Node 24, Temporal CLI 1.3, SQLite store.',
  tools: (called) => ({ ...agentTools, postComment: called }),
  called: 'postComment',
  plainTool: tool({ description: 'Posts one comment on an issue.', inputSchema: commentInput, execute: postComment }),
  effectTool: defineEffectTool({
    description: 'Posts one comment on an issue.',
    inputSchema: commentInput,
    execute: postComment,
  }),
};

let runSeq = 0;
let keys = 0; // key lengths summed, so the key computation cannot be optimised away
const store = new MemoryEffectStore();

async function generate(s: Scenario, tools: ToolSet, ctx: ToolContext): Promise<void> {
  const toolsContext = Object.fromEntries(Object.keys(tools).map((name) => [name, ctx]));
  const r = await generateText({
    model: s.model,
    ...(s.instructions === undefined ? {} : { instructions: s.instructions }),
    tools,
    toolsContext: toolsContext as never, // the same context handed to every tool in every variant
    prompt: s.prompt,
    stopWhen: isStepCount(3),
  });
  if (r.text !== 'Done.') throw new Error('unexpected run result');
}

/** The variants of one scenario, each a function doing one run. */
function sidesOf(s: Scenario) {
  const replayCtx = createToolContext({ runId: 'replay', agent: 'bench' });
  const floorResults = new Map<string, string>();
  const raw = (s.plainTool as { execute: (input: unknown, options: unknown) => Promise<unknown> }).execute;
  return {
    unwrapped: () => {
      const ctx = createToolContext({ runId: `plain-${++runSeq}`, agent: 'bench' });
      return generate(s, s.tools(s.plainTool), ctx);
    },
    wrapped: () => {
      const ctx = createToolContext({ runId: `effect-${++runSeq}`, agent: 'bench' });
      return generate(s, wrapToolsForRun(s.tools(s.effectTool), ctx, store), ctx);
    },
    /** The same run again (same runId, same store): the effect call takes the recorded path. */
    replayed: () => generate(s, wrapToolsForRun(s.tools(s.effectTool), replayCtx, store), replayCtx),
    floor: () => {
      const ctx = createToolContext({ runId: `floor-${++runSeq}`, agent: 'bench' });
      const called = {
        ...s.plainTool,
        execute: async (input: unknown, options: unknown) => {
          const key = `${ctx.run.runId}:${s.called}:${hash('sha256', canonicalJson(input), 'hex')}`;
          const known = floorResults.get(key);
          if (known !== undefined) return JSON.parse(known) as unknown;
          const result = await raw(input, options);
          floorResults.set(key, JSON.stringify(result));
          return result;
        },
      };
      return generate(s, s.tools(called), ctx);
    },
    /** Only the spec's default key is computed (the library's own defaultEffectKey); nothing is looked up. */
    keyOnly: () => {
      const ctx = createToolContext({ runId: `key-${++runSeq}`, agent: 'bench' });
      const called = {
        ...s.plainTool,
        execute: (input: unknown, options: unknown) => {
          keys += defaultEffectKey(ctx.run.runId, s.called, input).length;
          return raw(input, options);
        },
      };
      return generate(s, s.tools(called), ctx);
    },
  };
}

/**
 * Why microseconds grow inside a run: one SHA-256 of a key-sized string, timed in place inside the
 * tool's `execute` of real runs, and the same call in a tight loop. Median µs of each.
 */
async function hashInPlace(runs: number): Promise<{ inRun: number; tight: number }> {
  const inRun: number[] = [];
  const timed = {
    ...minimal.plainTool,
    execute: async (input: unknown, options: unknown) => {
      const text = `run-${runSeq}:notify:${canonicalJson(input)}`;
      const t0 = performance.now();
      hash('sha256', text, 'hex');
      inRun.push((performance.now() - t0) * 1000);
      return (minimal.plainTool as { execute: (i: unknown, o: unknown) => Promise<unknown> }).execute(input, options);
    },
  };
  for (let i = 0; i < runs; i++) {
    const ctx = createToolContext({ runId: `hash-${++runSeq}`, agent: 'bench' });
    await generate(minimal, minimal.tools(timed), ctx);
  }
  const tight: number[] = [];
  for (let i = 0; i < runs; i++) {
    const text = `run-${i}:notify:{"body":"hello","issue":7}`;
    const t0 = performance.now();
    hash('sha256', text, 'hex');
    tight.push((performance.now() - t0) * 1000);
  }
  return { inRun: median(inRun.slice(runs / 2)), tight: median(tight.slice(runs / 2)) };
}

type Side = () => Promise<void>;

/** µs per run of each side: the median batch, batches interleaved, order rotated every round. */
async function compare(sides: Record<string, Side>): Promise<Record<string, number>> {
  const names = Object.keys(sides);
  for (let i = 0; i < 300; i++) for (const name of names) await (sides[name] as Side)(); // warm-up: JIT every path
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(r + k) % names.length] as string;
      const side = sides[name] as Side;
      const t0 = now();
      for (let i = 0; i < BATCH; i++) await side();
      times[name]?.push(((now() - t0) * 1000) / BATCH);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(times[n] ?? [])]));
}

// ---------------------------------------------------------------- 2./3. per-call paths
type Exec = (input: unknown, options: ToolExecutionOptions<ToolContext>) => Promise<unknown>;
const effectTool = minimal.effectTool;
const benchCtx = createToolContext({ runId: 'bench-calls', agent: 'bench' });
const options: ToolExecutionOptions<ToolContext> = { toolCallId: 'call-1', messages: [], context: benchCtx };

async function recordedPerCall(n: number): Promise<number> {
  const s = new MemoryEffectStore();
  const wrapped = wrapToolsForRun({ notify: effectTool }, benchCtx, s).notify.execute as Exec;
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
  const wrapped = wrapToolsForRun({ notify: effectTool }, ctx, s).notify.execute as Exec;
  const raw = effectTool.execute as Exec;
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
  `@chamvi/temporal core benchmark — node ${process.version}, ${WALL ? 'wall' : 'CPU'} time, ` +
    `${ROUNDS} rounds of ${BATCH} runs per side (median batch)`,
);

const small = await compare(sidesOf(minimal));
const { unwrapped: aPlain, wrapped: aWrapped } = sidesOf(agentSized);
const agent = await compare({ unwrapped: aPlain, wrapped: aWrapped });
const hashed = await hashInPlace(4000);

await recordedPerCall(5000);
await executePerCall(CALLS_PER_ROUND);
const recorded: number[] = [];
const execWrapped: number[] = [];
const execRaw: number[] = [];
const overhead: number[] = [];
for (let r = 0; r < CALL_ROUNDS; r++) {
  recorded.push(await recordedPerCall(CALLS_PER_ROUND));
  const e = await executePerCall(CALLS_PER_ROUND);
  execWrapped.push(e.wrapped);
  execRaw.push(e.raw);
  overhead.push(e.wrapped - e.raw);
}

const us = (n: number | undefined) => `${fmt(n ?? NaN, 0)} µs`;
const ratio = (side: Record<string, number>, name: string) => (side[name] ?? NaN) / (side['unwrapped'] ?? NaN);
const rows = [
  {
    measure: 'generateText, 1 tool call, smallest run: wrapped / unwrapped',
    value: ratio(small, 'wrapped'),
    result: `${fmt(ratio(small, 'wrapped'), 3)} (${us(small['wrapped'])} vs ${us(small['unwrapped'])} per run)`,
    target: 1.05,
  },
  {
    measure: 'generateText, 1 tool call, agent-sized run: wrapped / unwrapped',
    value: ratio(agent, 'wrapped'),
    result: `${fmt(ratio(agent, 'wrapped'), 3)} (${us(agent['wrapped'])} vs ${us(agent['unwrapped'])} per run)`,
    target: 1.05,
  },
  {
    measure: 'recorded path, per call',
    value: median(recorded),
    result: `${fmt(median(recorded))} µs`,
    target: 15,
  },
  {
    measure: 'execute path overhead over raw execute, per call',
    value: median(overhead),
    result: `${fmt(median(overhead))} µs (${fmt(median(execWrapped))} µs wrapped, ${fmt(median(execRaw))} µs raw)`,
    target: 25,
  },
];
console.log(
  `info  smallest run, replayed (the recorded path): ${fmt(ratio(small, 'replayed'), 3)} (${us(small['replayed'])}); ` +
    `hand-written floor (key hash + Map): ${fmt(ratio(small, 'floor'), 3)} (${us(small['floor'])}); ` +
    `the default key alone: ${fmt(ratio(small, 'keyOnly'), 3)} (${us(small['keyOnly'])})`,
);
console.log(
  `info  one crypto.hash of a key: ${fmt(hashed.inRun)} µs inside a run, ${fmt(hashed.tight)} µs in a tight loop (median)`,
);
for (const row of rows)
  console.log(`${row.value <= row.target ? 'PASS' : 'MISS'}  ${row.measure}: ${row.result}  (target <= ${row.target})`);
console.log(
  `spread over call rounds: recorded ${fmt(Math.min(...recorded))}..${fmt(Math.max(...recorded))} µs, ` +
    `overhead ${fmt(Math.min(...overhead))}..${fmt(Math.max(...overhead))} µs`,
);
if (keys === 0) throw new Error('no key was computed');
if (rows.some((r) => r.value > r.target)) process.exitCode = 1;
