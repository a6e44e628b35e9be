// Benchmark (not a test): what the library's activities cost a worker's CPU per run, without
// Temporal, the store's I/O or the remote.
//   npm run bench:activities        (node --import tsx bench/activity-bodies.ts)
// One run of the agent of bench/bench-sides.ts (3 comment steps + the final text) = 4 model-step
// and 3 effect-call activity bodies, called in this process through MockActivityEnvironment, on
// the in-memory store, the comment tool's remote a Map. Baseline, in the same process, rounds
// interleaved: the same run as bare AI SDK calls (one generateText per step with the tools
// offered without execute, then the tool's execute per call), which is what any agent worker does
// per step. Prints CPU (process.cpuUsage, user + system) per run of each, median of the rounds,
// and their ratio. Env: BENCH_RUNS per round (500), BENCH_ROUNDS (5).
import { MockActivityEnvironment } from '@temporalio/testing';
import { generateText, isStepCount, type ModelMessage } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { createChamviActivities } from '../activities/index.js';
import type { ModelStepInput, ModelStepResult, ToolCallInput, ToolCallResult } from '../common/index.js';
import { defineAgent, defineEffectTool, stepIndex } from '../src/index.js';
import { MemoryEffectStore } from '../src/stores/index.js';
import { median } from './bench-sides.js';
import { benchModel, promptFor } from './history-script.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 500);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const AGENT = 'bench-activities';

const posted = new Map<string, number>();
const inputSchema = z.object({ issue: z.number(), body: z.string() });
const post = (key: string) => {
  posted.set(key, posted.size);
  return { id: posted.size };
};
const comment = defineEffectTool({
  description: 'Posts a comment on the issue.',
  inputSchema,
  effectKey: ({ issue }, ctx, options) => `${ctx.run.runId}:comment:${issue}:${stepIndex(options)}`,
  alreadyApplied: async (key) => (posted.has(key) ? { id: posted.get(key) ?? 0 } : undefined),
  execute: async ({ issue }, { context, messages }) =>
    post(`${context.run.runId}:comment:${issue}:${stepIndex({ messages })}`),
});
const agent = defineAgent({
  name: AGENT,
  model: benchModel(),
  instructions: 'Post.',
  maxSteps: 41,
  tools: { comment },
});
const activities = createChamviActivities({ agents: [agent], store: new MemoryEffectStore() });
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const env = new MockActivityEnvironment({ attempt: 1 }, { logger: silent });
const modelStep = (input: ModelStepInput): Promise<ModelStepResult> =>
  env.run((i: ModelStepInput) => activities['chamvi.modelStep'](i), input);
const effectCall = (input: ToolCallInput): Promise<ToolCallResult> =>
  env.run((i: ToolCallInput) => activities['chamvi.effectCall'](i), input);

async function libraryRun(issue: number): Promise<void> {
  const runId = randomUUID();
  let conversation: ModelStepInput['conversation'] = { pending: [{ role: 'user', content: promptFor(issue, 3) }] };
  for (let step = 0; ; step++) {
    const result = await modelStep({ agent: AGENT, runId, step, conversation });
    const stored = result.conversation;
    if (result.toolCalls.length === 0 || stored === undefined) return;
    const content = [];
    for (const call of result.toolCalls) {
      const { output } = await effectCall({
        agent: AGENT,
        runId,
        toolName: call.toolName,
        toolCallId: call.toolCallId,
        input: call.input,
        conversation: stored.prompt,
        key: call.key,
      });
      content.push({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output });
    }
    conversation = { head: stored.head, pending: [{ role: 'tool', content }] };
  }
}

const offered = { comment: { description: 'Posts a comment on the issue.', inputSchema } };
const model = benchModel();

async function bareRun(issue: number): Promise<void> {
  const runId = randomUUID();
  const messages: ModelMessage[] = [{ role: 'user', content: promptFor(issue, 3) }];
  for (let step = 0; ; step++) {
    const result = await generateText({
      model,
      system: 'Post.',
      messages,
      tools: offered,
      stopWhen: isStepCount(1),
      maxRetries: 0,
    });
    if (result.toolCalls.length === 0) return;
    messages.push(...result.response.messages);
    const content = result.toolCalls.map((call) => ({
      type: 'tool-result' as const,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      output: { type: 'json' as const, value: post(`${runId}:comment:${issue}:${step}`) },
    }));
    messages.push({ role: 'tool', content });
  }
}

async function cpuPerRunMs(run: (issue: number) => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) await run(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / RUNS;
}

const sides = { library: libraryRun, bare: bareRun };
const times: Record<keyof typeof sides, number[]> = { library: [], bare: [] };
for (const run of Object.values(sides)) await cpuPerRunMs(run);
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? (['library', 'bare'] as const) : (['bare', 'library'] as const);
  for (const side of order) times[side].push(await cpuPerRunMs(sides[side]));
}
const library = median(times.library);
const bare = median(times.bare);
console.log(`${RUNS} runs per round, ${ROUNDS} rounds; CPU per 3-step run (4 model steps, 3 comment calls):`);
console.log(
  `  library activity bodies  ${library.toFixed(3)} ms  (rounds: ${times.library.map((t) => t.toFixed(3)).join(', ')})`,
);
console.log(
  `  bare AI SDK calls        ${bare.toFixed(3)} ms  (rounds: ${times.bare.map((t) => t.toFixed(3)).join(', ')})`,
);
console.log(
  `  library / bare           ${(library / bare).toFixed(2)}x; the library adds ${(library - bare).toFixed(3)} ms per run`,
);
