// Benchmark (not a test): the workflow side's CPU per agent run, with the library's workflow
// modules preloaded (what chamviPlugin bundles) and without (each run evaluates them).
//   npm run bench:workflow-replay        (node --import tsx bench/workflow-replay.ts)
// Replays a recorded 3-step run (test/fixtures/histories/agent-run-0.3.json) BENCH_REPLAYS times
// per round on a replay worker of each bundle, BENCH_ROUNDS rounds alternating which bundle goes
// first. A replay worker runs the workflow code in a reusable V8 context as a live worker does
// (on the main thread, not a workflow thread), with no server, activities or store in the way:
// the process's CPU (user+sys) per replayed run, medians over the rounds, is the workflow side's
// cost (Temporal's Core replaying the history, the activations, the workflow code).
import proto from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import { chamviWorkflowsPath } from '../worker/index.js';
import { median } from './bench-sides.js';

const REPLAYS = Number(process.env['BENCH_REPLAYS'] ?? 300);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);

Runtime.install({ logger: new DefaultLogger('ERROR') });
const history = proto.temporal.api.history.v1.History.fromObject(
  JSON.parse(readFileSync(new URL('../test/fixtures/histories/agent-run-0.3.json', import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >,
);
const logger = new DefaultLogger('ERROR');
const workflowsPath = chamviWorkflowsPath();
const bundles: Record<'preloaded' | 'per run', WorkflowBundle> = {
  preloaded: await bundleWorkflowCode({ workflowsPath, preloadModules: [workflowsPath], logger }),
  'per run': await bundleWorkflowCode({ workflowsPath, logger }),
};

function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function* replays(count: number) {
  for (let i = 0; i < count; i++) yield { workflowId: `replay-${i}`, history };
}

/** Replays `count` runs on one replay worker; process CPU ms per run. */
async function round(bundle: WorkflowBundle, count: number): Promise<number> {
  const cpu = processCpuMs();
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: bundle, replayName: 'bench' },
    replays(count),
  )) {
    if (result.error !== undefined) throw result.error;
  }
  return (processCpuMs() - cpu) / count;
}

const names = Object.keys(bundles) as Array<keyof typeof bundles>;
for (const name of names) await round(bundles[name], 50);
const measured = new Map(names.map((name) => [name, [] as number[]]));
for (let r = 0; r < ROUNDS; r++) {
  for (const name of r % 2 === 0 ? names : [...names].reverse())
    measured.get(name)?.push(await round(bundles[name], REPLAYS));
}
console.log(
  `${REPLAYS} replays of a recorded 3-step agent run per round, ${ROUNDS} rounds (alternating) after a warm-up`,
);
console.log('');
console.log('| library workflow modules | CPU per replayed run, ms (rounds) | median |');
console.log('| --- | --- | ---: |');
for (const name of names) {
  const rounds = measured.get(name) ?? [];
  console.log(`| ${name} | ${rounds.map((ms) => ms.toFixed(2)).join(', ')} | ${median(rounds).toFixed(2)} |`);
}
const per = (name: keyof typeof bundles) => measured.get(name) ?? [];
const ratios = per('preloaded').map((ms, i) => ms / (per('per run')[i] ?? NaN));
console.log('');
console.log(`- preloaded / per run, process CPU: ${median(ratios).toFixed(2)}x (median of per-round ratios)`);
