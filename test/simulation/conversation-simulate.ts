import { openBackend } from './conversation-backend.js';
import { SimWorker } from './conversation-execution.js';
import { ConversationJudge } from './conversation-judge.js';
import {
  describeConversationScenario,
  drawConversationScenario,
  type ConversationScenario,
} from './conversation-scenario.js';
import { tamper } from './conversation-tamper.js';
import { WorkflowDriver } from './conversation-workflow.js';
import type { ConvWorld } from './conversation-world.js';
import type { Violation } from './invariants.js';
import { sqliteWalkBounded } from './sqlite-walk-probe.js';
import { Trace } from './trace.js';
import { VirtualClock } from './virtual-clock.js';

/** The outcome of one conversation seed. */
export interface ConversationSeedResult {
  readonly seed: number;
  readonly violations: readonly Violation[];
  /** The scenario and every event, readable (rendered on demand: most seeds are never printed). */
  readonly trace: () => string;
  /** Executions the history ran, and model-step loads it judged. */
  readonly executions: number;
}

/**
 * Runs the conversation history of `seed` on a virtual clock: the workflows' executions (model
 * steps and tool calls through the real `stepConversation`, `callOptionsFor`, `ConversationLog`
 * and `ConversationCache`) on 1-3 workers sharing one real store (memory, or SQLite in memory),
 * with prunes, worker restarts and tampered rows at their planned times, and the client's
 * `loadConversation` after each close. The invariants are judged as it runs (ConversationJudge).
 */
export async function simulateConversation(seed: number): Promise<ConversationSeedResult> {
  const scenario = drawConversationScenario(seed);
  const cycles = scenario.tampers.some((t) => t.kind === 'cycle' || t.kind === 'self-parent');
  const bounded = scenario.backend === 'sqlite' && cycles ? await sqliteWalkBounded() : true;
  const clock = new VirtualClock();
  try {
    return await run(scenario, clock, bounded);
  } finally {
    clock.uninstall();
  }
}

async function run(
  scenario: ConversationScenario,
  clock: VirtualClock,
  walkBounded: boolean,
): Promise<ConversationSeedResult> {
  const trace = new Trace(() => clock.now());
  const judge = new ConversationJudge(trace);
  const backend = await openBackend(scenario.backend, scenario.retentionMs, () => clock.storeNow());
  const work = new Set<Promise<unknown>>();
  const world: ConvWorld = {
    scenario,
    clock,
    trace,
    judge,
    backend,
    workers: scenario.workers.map((plan) => new SimWorker(plan, backend.store)),
    executions: [],
    sqliteWalkBounded: walkBounded,
    zombieCloses: new Map(),
    track(promise) {
      work.add(promise);
      const done = (): boolean => work.delete(promise);
      // A failure is the judge's to see, never an unhandled rejection.
      promise.then(done, done);
    },
  };
  for (const worker of world.workers) {
    for (const at of worker.plan.restarts) {
      clock.at(at, () => {
        worker.restart();
        trace.log(worker.name, 'restarts (its cache is gone)');
      });
    }
  }
  for (const prune of scenario.prunes) clock.at(prune.at, () => world.track(pruneNow(world, prune.limit)));
  for (const t of scenario.tampers) clock.at(t.at, () => tamper(world, t.kind, t.pick));
  const drivers = scenario.workflows.map((plan, i) => new WorkflowDriver(world, plan, i));
  for (const driver of drivers) driver.start();
  const horizon = 40 * scenario.retentionMs;
  const started = (): boolean => drivers.every((d) => d.current !== undefined);
  await clock.run(horizon, () => started() && work.size === 0);
  if (work.size > 0) {
    judge.violations.push({
      invariant: 'live-work-settles',
      message: `${work.size} model steps, tool calls or reads still pending at ${clock.now()} ms`,
    });
  }
  await backend.close();
  return {
    seed: scenario.seed,
    violations: judge.violations,
    trace: () => [...describeConversationScenario(scenario).map((l) => `    ${l}`), trace.render()].join('\n'),
    executions: world.executions.length,
  };
}

async function pruneNow(world: ConvWorld, limit: number): Promise<void> {
  const { backend, judge, trace, executions } = world;
  const deleted = await backend.prune(limit);
  if (deleted === 0) return;
  const after = backend.rows();
  trace.log('world', `prune(${limit}) deleted ${deleted} rows (${after.size} entries left)`);
  const closedBy = (id: string, runId: string): string => {
    const others =
      executions
        .filter((e) => e.runId === runId && e.status !== 'running')
        .map((e) => `${e.id} ${e.status}`)
        .join(', ') || 'no other execution of the run ended';
    const zombie = world.zombieCloses.get(id);
    return zombie === undefined ? others : `${others}; its own zombie attempt stored a final answer at ${zombie} ms`;
  };
  const open = executions.filter((e) => e.open);
  judge.prune(
    after,
    open.map((e) => ({ id: e.id, runId: e.runId, open: true, keys: e.chainKeys(e.stored.length) })),
    closedBy,
  );
}
