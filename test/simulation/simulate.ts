import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { Actor, EFFECT_KEY, type ActorWorld, type FenceOf } from './actors.js';
import type { History } from './history.js';
import { judge, type Violation } from './invariants.js';
import { Network } from './network.js';
import { Prng } from './prng.js';
import type { Explanation } from './duplicate-causes.js';
import { createRemote } from './remotes.js';
import { describeScenario, drawScenario, type Scenario } from './scenario.js';
import { SimProcess } from './sim-process.js';
import { SimStoreConnection } from './store-connection.js';
import { StoreLedger } from './store-ledger.js';
import { ActivityRun, type TemporalWorld } from './temporal-model.js';
import { Trace } from './trace.js';
import { VirtualClock } from './virtual-clock.js';

/** What the protocol under test offers, detected once (the simulator runs on older code too). */
export interface ProtocolFeatures {
  /** `effectFenceOf`, when the protocol hands `execute` the claim's fence. */
  readonly fenceOf: FenceOf | undefined;
}

/** Detects the protocol's features: `effectFenceOf` is looked up, not imported, so old code loads. */
export async function detectProtocol(): Promise<ProtocolFeatures> {
  const module = (await import('../../src/effects/effect-key-of.js')) as Record<string, unknown>;
  const fenceOf = typeof module['effectFenceOf'] === 'function' ? (module['effectFenceOf'] as FenceOf) : undefined;
  return { fenceOf };
}

/** The outcome of one seed. */
export interface SeedResult {
  readonly seed: number;
  readonly scenario: Scenario;
  readonly violations: readonly Violation[];
  /** The scenario and every event, readable. */
  readonly trace: string;
  /** Applications of the effect on the remote. */
  readonly applications: number;
  /** Second applications the remote's strategy admits, each with the documented cause that explains it. */
  readonly explained: readonly Explanation[];
  /** Virtual time the history covered, ms. */
  readonly virtualMs: number;
}

/**
 * Runs the history of `seed`: draws its scenario, builds the world (processes, their store
 * connections to one `MemoryEffectStore` on the database's clock, the remote, the attempts),
 * runs it on the virtual clock until every attempt is done, dead or hung, probes the key one lease
 * and one retry later, checks the invariants, then tears the world down so that nothing of it
 * (the claims' keep-alive timers included) reaches the next seed.
 */
export async function simulate(seed: number, features: ProtocolFeatures): Promise<SeedResult> {
  const scenario = drawScenario(seed, features.fenceOf !== undefined);
  const clock = new VirtualClock();
  try {
    return await run(scenario, clock, features);
  } finally {
    clock.uninstall();
  }
}

/** The longest pause between two claims of a busy wait (`Claim.acquire`): "one retry" after a lease. */
const RETRY_PAUSE_MS = 500;

async function run(scenario: Scenario, clock: VirtualClock, features: ProtocolFeatures): Promise<SeedResult> {
  const { seed, leaseMs } = scenario;
  const trace = new Trace(() => clock.now());
  const network = new Network(clock, new Prng(seed, 2), trace, scenario.network);
  const model = new MemoryEffectStore({ now: () => clock.storeNow() });
  const ledger = new StoreLedger(() => clock.now());
  const remote = createRemote(scenario.remote, () => clock.now());
  const processes = startProcesses(scenario, clock, trace);
  const connections = connect(scenario, processes, { model, network, ledger, clock, rng: new Prng(seed, 3) });
  const actors: Actor[] = [];
  const runs = startTemporal(
    scenario,
    { clock, trace, processes, connections, actors },
    {
      scenario,
      clock,
      trace,
      network,
      remote,
      fenceOf: features.fenceOf,
    },
  );
  for (const step of scenario.wallSteps) {
    clock.at(step.at, () => {
      clock.stepWall(step.deltaMs);
      trace.log(
        'world',
        `wall clock steps ${step.deltaMs > 0 ? 'forward' : 'back'} ${Math.abs(step.deltaMs)} ms (now ${clock.wallOffset()} ms off)`,
      );
    });
  }

  // Run until Temporal is done with every run and every attempt is done, dead, or hung in its own
  // execute, within a horizon far past every planned event (the longest planned delays, busy
  // waits and stalls all fit in it).
  const lastEvent = Math.max(
    scenario.rerun === undefined ? 0 : scenario.rerun.cancelAt + scenario.rerun.afterMs,
    ...scenario.processes.flatMap((p) => p.pauses.map((x) => x.at + x.durationMs)),
  );
  const attempts = scenario.attempts.length + (scenario.rerun?.attempts.length ?? 0) + 1;
  const perAttempt = scenario.retry.startToCloseMs + scenario.retry.backoffMs + scenario.busyWaitMs;
  const horizon = lastEvent + attempts * perAttempt + 60 * leaseMs + scenario.abortGraceMs;
  await clock.run(
    horizon,
    () => runs.every((r) => r.finished) && actors.every((a) => endOf(a, scenario) !== undefined),
  );

  const probe = await probeKey(actors, scenario, ledger, model, clock, trace);
  const history: History = { scenario, actors, processes, ledger, remote, ...(probe === undefined ? {} : { probe }) };
  const { violations, explained } = judge(history);
  const virtualMs = clock.now();
  const leak = await tearDown(network, processes, actors, clock, scenario);
  if (leak !== undefined) violations.push(leak);
  return {
    seed,
    scenario,
    violations,
    trace: [...describeScenario(scenario).map((l) => `    ${l}`), trace.render()].join('\n'),
    applications: remote.applications.length,
    explained,
    virtualMs,
  };
}

/** The worker processes, with their planned deaths and pauses scheduled. */
function startProcesses(scenario: Scenario, clock: VirtualClock, trace: Trace): Map<string, SimProcess> {
  const processes = new Map<string, SimProcess>();
  for (const plan of scenario.processes) {
    const crash = plan.crash !== undefined && 'nth' in plan.crash ? plan.crash : undefined;
    const process = new SimProcess(plan.name, clock, trace, crash);
    processes.set(plan.name, process);
    if (plan.crash !== undefined && 'at' in plan.crash) clock.at(plan.crash.at, () => process.kill('SIGKILL'));
    for (const pause of plan.pauses) clock.at(pause.at, () => process.pause(pause.durationMs));
  }
  return processes;
}

/** One store connection per process, all to the one model. */
function connect(
  scenario: Scenario,
  processes: ReadonlyMap<string, SimProcess>,
  shared: {
    readonly model: MemoryEffectStore;
    readonly network: Network;
    readonly ledger: StoreLedger;
    readonly clock: VirtualClock;
    readonly rng: Prng;
  },
): Map<string, SimStoreConnection> {
  const connections = new Map<string, SimStoreConnection>();
  for (const plan of scenario.processes) {
    const process = processes.get(plan.name);
    if (process === undefined) continue;
    const { model, network, ledger, clock, rng } = shared;
    connections.set(
      plan.name,
      new SimStoreConnection(process, model, network, ledger, clock, rng, plan.storeFaults, actorOf),
    );
  }
  return connections;
}

/** The attempt an owner token belongs to (owners are `owner-A2`). */
const actorOf = (owner: string): string => owner.replace(/^owner-/, '');

/**
 * Temporal's side: the first run's activity, the identical call of the same step, the cancel and
 * rerun. Started attempts are appended to `place.actors`.
 */
function startTemporal(
  scenario: Scenario,
  place: {
    readonly clock: VirtualClock;
    readonly trace: Trace;
    readonly processes: ReadonlyMap<string, SimProcess>;
    readonly connections: ReadonlyMap<string, SimStoreConnection>;
    readonly actors: Actor[];
  },
  world: ActorWorld,
): ActivityRun[] {
  const { clock, trace, connections, actors } = place;
  const workers = [...place.processes.values()];
  const temporal: TemporalWorld = {
    clock,
    trace,
    spawn: (plan, origin, on) => {
      // Temporal hands the task to a worker that polls: a live one, preferably not frozen.
      const alive = workers.filter((p) => !p.isDead);
      const polling = alive.filter((p) => !p.pausedAt(clock.now()));
      const pool = polling.length > 0 ? polling : alive;
      const process = on ?? pool[Math.floor(plan.worker * pool.length)];
      const connection = process === undefined ? undefined : connections.get(process.name);
      if (process === undefined || process.isDead || connection === undefined) return undefined;
      const actor = new Actor(plan, origin, process, connection, world);
      actors.push(actor);
      actor.start();
      return actor;
    },
  };
  const first = new ActivityRun('run 1', scenario.attempts, scenario.retry, temporal);
  const runs = [first];
  first.startAt(0);
  const { sibling, rerun } = scenario;
  if (sibling !== undefined) {
    // The model asked for the same call twice in one step: both activities land on one worker.
    const twin = new ActivityRun('identical call', [sibling], scenario.retry, temporal, () => actors[0]?.process);
    runs.push(twin);
    twin.startAt(1);
  }
  if (rerun !== undefined) {
    const again = new ActivityRun('rerun', rerun.attempts, scenario.retry, temporal);
    runs.push(again);
    clock.at(rerun.cancelAt, () => first.cancel());
    again.startAt(rerun.cancelAt + rerun.afterMs);
  }
  return runs;
}

/**
 * When an attempt stopped mattering to the key: it settled or died; a hung execute keeps its
 * claim until the protocol's cap after the abort, then gives it up. `undefined` while it runs.
 */
function endOf(a: Actor, scenario: Scenario): number | undefined {
  if (a.outcome !== undefined) return a.outcome.at;
  if (a.process.isDead) return a.process.diedAt;
  if (!a.started) return undefined;
  if (a.plan.execute.hangs && a.executeStartedAt !== undefined && a.abortedAt !== undefined) {
    // The keeper notes the abort at its next tick and gives up at the first tick past the cap.
    return a.abortedAt + scenario.abortGraceMs + 2 * Math.max(1, Math.floor(scenario.leaseMs / 6)) + 1;
  }
  return undefined;
}

/**
 * Asks the store for the key one lease and one retry after the last attempt ended (when every
 * attempt did): it must be recorded or free, never still claimed. A renewal an attempt sent
 * before it ended may land later and extend its lease once more (a message on the wire cannot be
 * called back); the probe waits that out too, but not a renewal sent after the attempt ended.
 */
async function probeKey(
  actors: readonly Actor[],
  scenario: Scenario,
  ledger: StoreLedger,
  model: MemoryEffectStore,
  clock: VirtualClock,
  trace: Trace,
): Promise<History['probe']> {
  const ends = actors.map((a) => endOf(a, scenario));
  if (!ends.every((t) => t !== undefined)) return undefined;
  const { leaseMs } = scenario;
  let at = Math.max(clock.now(), ...ends.map((t) => (t ?? 0) + leaseMs + RETRY_PAUSE_MS));
  for (;;) {
    await clock.run(at);
    const answer = await model.claim(EFFECT_KEY, { owner: 'probe', leaseMs: 0, toolName: 'answer' });
    if (answer.status !== 'busy') {
      const probe = { at: clock.now(), answer: answer.status === 'done' ? ('recorded' as const) : ('free' as const) };
      trace.log('world', `probe: the key is ${probe.answer}`);
      return probe;
    }
    const holder = actors.find((a) => a.owner === answer.owner);
    const end = holder === undefined ? undefined : endOf(holder, scenario);
    const extended = ledger.requests.findLast(
      (r) => r.op === 'renew' && r.owner === answer.owner && r.status === 'ok' && r.arrivedAt !== undefined,
    );
    const lateButSentInTime =
      end !== undefined && extended?.arrivedAt !== undefined && extended.sentAt <= end && extended.arrivedAt > end;
    if (lateButSentInTime && extended.arrivedAt !== undefined && extended.arrivedAt + leaseMs + RETRY_PAUSE_MS > at) {
      trace.log('world', `probe: the key is still claimed by a renewal sent before the attempt ended; waiting`);
      at = extended.arrivedAt + leaseMs + RETRY_PAUSE_MS;
      continue;
    }
    trace.log('world', `probe: the key is busy (held by ${actorOf(answer.owner)})`);
    return { at: clock.now(), answer: 'busy', holder: actorOf(answer.owner), remainingMs: answer.leaseRemainingMs };
  }
}

/**
 * Ends the history so that nothing of it reaches the next seed: every parked or later request
 * fails at once, hung executes throw, signals abort; then timers run until every call has settled
 * and none is left (the claims' keep-alive timers included).
 * @returns a violation when something is still pending.
 */
async function tearDown(
  network: Network,
  processes: ReadonlyMap<string, SimProcess>,
  actors: readonly Actor[],
  clock: VirtualClock,
  scenario: Scenario,
): Promise<Violation | undefined> {
  network.teardown();
  for (const p of processes.values()) p.teardown();
  for (const a of actors) a.teardown();
  await clock.drain(clock.now() + 100 * scenario.leaseMs + scenario.abortGraceMs);
  const unsettled = actors.filter((a) => a.started && !a.settled);
  if (unsettled.length === 0 && clock.pendingTimers() === 0) return undefined;
  return {
    invariant: 'teardown',
    message: `after teardown ${unsettled.map((a) => a.name).join(', ') || 'no call'} still pending and ${clock.pendingTimers()} timers left: process-wide state would leak into the next seed`,
  };
}
