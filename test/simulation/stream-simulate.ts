import { FaultyStreamStore } from './faulty-stream-store.js';
import type { Violation } from './invariants.js';
import { Prng } from './prng.js';
import { openStreamBackend } from './stream-backend.js';
import { judgeStreams } from './stream-judge.js';
import { StreamLedger } from './stream-ledger.js';
import { PageReader } from './stream-page.js';
import { StreamReader } from './stream-reader.js';
import { describeStreamScenario, drawStreamScenario, type StreamScenario } from './stream-scenario.js';
import { PAGE_CLOSED, type StreamWorld } from './stream-world.js';
import { StreamWorkflow } from './stream-workflow.js';
import { Trace } from './trace.js';
import { VirtualClock } from './virtual-clock.js';

/** The outcome of one stream seed. */
export interface StreamSeedResult {
  readonly seed: number;
  readonly violations: readonly Violation[];
  /** The scenario and every event, readable (rendered on demand). */
  readonly trace: () => string;
  /** Batches the store committed. */
  readonly batches: number;
  /** Pages whose duplicated parts a documented cause explains, by cause. */
  readonly documented: Readonly<Record<string, number>>;
}

/**
 * The budget a model step's stream may add to its latency when the writer does not document one:
 * the simulator's parameter until `RunStreamWriter` exports its own.
 */
export const ASSUMED_CLOSE_BUDGET_MS = 2000;

/** The documented budget: `RunStreamWriter`'s exported constant, looked up (older code has none). */
export async function closeBudgetMs(): Promise<number> {
  const module = (await import('../../src/stream/run-stream-writer.js')) as Record<string, unknown>;
  const found = Object.entries(module).find(([name, value]) => /BUDGET/.test(name) && typeof value === 'number');
  return (found?.[1] as number | undefined) ?? ASSUMED_CLOSE_BUDGET_MS;
}

/**
 * Runs the stream history of `seed` on a virtual clock: workflows whose model steps write through
 * real `RunStreamWriter`s to one real store (memory, or SQLite in memory) behind a connection
 * with faults, readers following them with the real `readRunStream` (and the page made with the
 * real `RunStreamUIState`), prunes at planned times. Judged after the history (judgeStreams).
 */
export async function simulateStream(seed: number, budgetMs: number): Promise<StreamSeedResult> {
  const scenario = drawStreamScenario(seed);
  const clock = new VirtualClock();
  try {
    return await run(scenario, clock, budgetMs);
  } finally {
    clock.uninstall();
  }
}

async function run(scenario: StreamScenario, clock: VirtualClock, budgetMs: number): Promise<StreamSeedResult> {
  const trace = new Trace(() => clock.now());
  const ledger = new StreamLedger();
  const backend = await openStreamBackend(scenario.backend, scenario.retentionMs, () => clock.storeNow());
  const store = new FaultyStreamStore(
    backend.store,
    clock,
    new Prng(scenario.seed, 41),
    scenario.health,
    ledger,
    trace,
  );
  const work = new Set<Promise<unknown>>();
  const writers = new Set<Promise<unknown>>();
  const ending = new AbortController();
  const world: StreamWorld = {
    scenario,
    clock,
    trace,
    backend,
    store,
    ledger,
    closes: [],
    workflows: [],
    budgetMs,
    documented: {},
    closedAt: undefined,
    writersDone: () => writers.size === 0 && clock.now() >= lastStart,
    ended: ending.signal,
    track(promise, writer = false) {
      work.add(promise);
      if (writer) writers.add(promise);
      const done = (): void => {
        work.delete(promise);
        writers.delete(promise);
      };
      // A failure is the judge's to see (a reader's error is in its session), never an unhandled rejection.
      promise.then(done, done);
    },
  };
  const lastStart = Math.max(...scenario.workflows.map((w) => w.startAt));
  const workflows = scenario.workflows.map((plan, i) => new StreamWorkflow(world, plan, i));
  const readers = scenario.readers.map((plan) => {
    const follows = world.workflows[plan.workflow] ?? world.workflows[0];
    if (follows === undefined) throw new Error('no workflow to follow');
    return plan.kind === 'page' ? new PageReader(world, plan, follows) : new StreamReader(world, plan, follows);
  });
  for (const w of workflows) w.start();
  for (const r of readers) r.start();
  for (const at of scenario.prunes) {
    clock.at(at, () => {
      world.track(
        store.prune().then(
          (n) => {
            if (n > 0) trace.log('world', `prune deleted ${n} batches`);
          },
          (error: unknown) => trace.log('world', `prune failed: ${String(error)}`),
        ),
      );
    });
  }
  const { closeAt } = scenario;
  if (closeAt !== undefined) {
    clock.at(closeAt, () => {
      world.closedAt = clock.now();
      trace.log('world', 'the process closes the stream store');
      world.track(backend.store.close());
    });
  }
  const horizon = 10 * scenario.retentionMs + 200_000;
  const lastReaderStart = Math.max(...scenario.readers.map((r) => r.startAt), lastStart);
  await clock.run(horizon, () => clock.now() > lastReaderStart && clock.now() > lastStart && work.size === 0);
  const violations = judgeStreams(world, readers);
  // What is still stuck (a close waiting for an append that never answers) is released.
  ending.abort(PAGE_CLOSED);
  store.teardown();
  await clock.drain(clock.now() + 10 * scenario.retentionMs);
  await backend.store.close();
  return {
    seed: scenario.seed,
    violations,
    trace: () => [...describeStreamScenario(scenario).map((l) => `    ${l}`), trace.render()].join('\n'),
    batches: ledger.batches.length,
    documented: world.documented,
  };
}
