// Benchmark (not a test): the Temporal engine on one dev server, in one process.
//   node --import tsx bench/temporal.ts        (or: npm run bench:temporal)
// 1. The same 3-step agent, its tool an effect tool vs a plain tool: activities and history events
//    per tool call, and the wall-time ratio effect/plain (memory store), over sequential runs.
// 2. Throughput: 100 concurrent runs of 3 steps on one worker.
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { tool } from 'ai';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAgent, defineEffectTool, type Agent } from '../src/index.js';
import { MemoryEffectStore } from '../src/stores/index.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { createDevServerEnvironment } from '../testing/test-environment.js';
import { createAgentWorker } from '../worker/index.js';
import { startAgentRun } from '../client/index.js';

Runtime.install({ logger: new DefaultLogger('WARN') });

const STEPS = 3;
const SEQUENTIAL_RUNS = Number(process.env['BENCH_RUNS'] ?? 30);
const CONCURRENT_RUNS = Number(process.env['BENCH_CONCURRENT'] ?? 100);

const script = [
  ...Array.from({ length: STEPS - 1 }, (_, i) => ({ toolCalls: [{ toolName: 'notify', input: { n: i } }] })),
  { text: 'Done.' },
];
const execute = async ({ n }: { n: number }) => ({ sent: n });
const effectAgent = defineAgent({
  name: 'bench-effect',
  model: scriptedModel(script),
  tools: { notify: defineEffectTool({ description: 'notify', inputSchema: z.object({ n: z.number() }), execute }) },
});
const plainAgent = defineAgent({
  name: 'bench-plain',
  model: scriptedModel(script),
  tools: { notify: tool({ description: 'notify', inputSchema: z.object({ n: z.number() }), execute }) },
});

const env = await createDevServerEnvironment();
const taskQueue = `bench-${randomUUID()}`;
const worker = await createAgentWorker({
  connection: env.nativeConnection,
  taskQueue,
  agents: [effectAgent, plainAgent],
  store: new MemoryEffectStore(),
  workerOptions: { maxConcurrentActivityTaskExecutions: 200, maxConcurrentWorkflowTaskExecutions: 200 },
});

async function runOnce(agent: Agent): Promise<{ ms: number; activities: number; events: number; toolCalls: number }> {
  const started = performance.now();
  const handle = await startAgentRun(env.client, { agent: agent.name, prompt: 'go', taskQueue });
  const result = await handle.result();
  const ms = performance.now() - started;
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes != null);
  const toolCalls = result.steps.reduce((n, s) => n + s.toolCalls.length, 0);
  return { ms, activities: scheduled.length - result.steps.length, events: events.length, toolCalls };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

await worker.runUntil(async () => {
  for (let i = 0; i < 3; i++) await Promise.all([runOnce(effectAgent), runOnce(plainAgent)]);
  const effect: number[] = [];
  const plain: number[] = [];
  let effectShape = { activities: 0, events: 0, toolCalls: 0 };
  let plainShape = { activities: 0, events: 0, toolCalls: 0 };
  // Interleaved so that machine noise hits both sides alike.
  for (let i = 0; i < SEQUENTIAL_RUNS; i++) {
    const e = await runOnce(effectAgent);
    const p = await runOnce(plainAgent);
    effect.push(e.ms);
    plain.push(p.ms);
    effectShape = e;
    plainShape = p;
  }
  const perCall = (s: typeof effectShape) =>
    `${(s.activities / s.toolCalls).toFixed(2)} activities, ${(s.events / s.toolCalls).toFixed(1)} history events per tool call (whole run: ${s.events} events)`;
  console.log(`effect tools: median ${median(effect).toFixed(1)} ms per ${STEPS}-step run; ${perCall(effectShape)}`);
  console.log(`plain tools:  median ${median(plain).toFixed(1)} ms per ${STEPS}-step run; ${perCall(plainShape)}`);
  console.log(
    `wall-time ratio effect/plain (median of ${SEQUENTIAL_RUNS} interleaved runs): ${(median(effect) / median(plain)).toFixed(3)}`,
  );

  const started = performance.now();
  const latencies = await Promise.all(
    Array.from({ length: CONCURRENT_RUNS }, async () => {
      const t = performance.now();
      const handle = await startAgentRun(env.client, { agent: effectAgent.name, prompt: 'go', taskQueue });
      await handle.result();
      return performance.now() - t;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN;
  console.log(
    `throughput: ${CONCURRENT_RUNS} concurrent ${STEPS}-step runs (effect tools) on one worker in ${seconds.toFixed(1)} s = ${(CONCURRENT_RUNS / seconds).toFixed(1)} runs/s; p50 ${median(latencies).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms`,
  );
});
await env.teardown();
