import type { NetworkProfile } from './network.js';
import { Prng } from './prng.js';
import { REMOTE_KINDS, type RemoteKind } from './remotes.js';
import type { OperationCrash } from './sim-process.js';
import type { StoreFaults } from './store-connection.js';

/** One simulated worker process and what happens to it. */
export interface ProcessPlan {
  readonly name: string;
  readonly storeFaults: StoreFaults;
  /** SIGKILL at a virtual time, or at one of its network operations (a protocol point). */
  readonly crash?: { readonly at: number } | OperationCrash;
  /** Freezes (SIGSTOP/SIGCONT, a VM pause): from `at`, for `durationMs`. */
  readonly pauses: readonly { readonly at: number; readonly durationMs: number }[];
}

/** What one attempt's hook (`alreadyApplied`, `execute`) does around its remote request. */
export interface HookPlan {
  /** Time spent before the remote request (a slow HTTP call), virtual ms. */
  readonly delayMs: number;
  /** Time spent after the remote answered, before returning (paging on, parsing, a second call), virtual ms. */
  readonly afterMs: number;
  /** Throws before touching the remote (a 503). */
  readonly fails: boolean;
}

/** What one attempt's `execute` does. */
export interface ExecutePlan extends HookPlan {
  /** Whether the delay ends early when the call's abort signal fires (the README's examples ignore it). */
  readonly honoursSignal: boolean;
  /** Never settles on its own, before the remote write (until its signal aborts, if it honours it). */
  readonly hangs: boolean;
}

/** How one attempt behaves, drawn before the history runs; where and when it runs is Temporal's doing. */
export interface AttemptPlan {
  /** `A1`, `A2`, ...; its number is also its attempt number (unique in a history). */
  readonly name: string;
  readonly attempt: number;
  /** Picks the worker among those alive when the attempt starts (a fraction in [0, 1)). */
  readonly worker: number;
  readonly alreadyApplied: HookPlan;
  readonly execute: ExecutePlan;
}

/**
 * The effect-call activity's options as Temporal applies them. The lease is the heartbeat timeout
 * (what the effect-call activity does: the shorter of heartbeat and start-to-close).
 */
export interface RetryPolicy {
  /** Attempts of the first run's activity (Temporal's `maximumAttempts`). */
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly startToCloseMs: number;
  readonly heartbeatTimeoutMs: number;
}

/** Everything that will happen in one history, drawn from its seed before it runs. */
export interface Scenario {
  readonly seed: number;
  readonly remote: RemoteKind;
  readonly leaseMs: number;
  readonly busyWaitMs: number;
  readonly abortGraceMs: number;
  readonly network: NetworkProfile;
  readonly processes: readonly ProcessPlan[];
  readonly retry: RetryPolicy;
  /** The first run's attempts, in order (Temporal starts as many as it needs, up to `maxAttempts`). */
  readonly attempts: readonly AttemptPlan[];
  /** A second, identical call of the tool in the same model step, on the same worker (in-process sharing). */
  readonly sibling?: AttemptPlan;
  /** The workflow is cancelled (the running attempt's signal aborts) and rerun with the same run id. */
  readonly rerun?: { readonly cancelAt: number; readonly afterMs: number; readonly attempts: readonly AttemptPlan[] };
  /** Steps of the workers' wall clock (`Date.now()`), back (negative) or forward. */
  readonly wallSteps: readonly { readonly at: number; readonly deltaMs: number }[];
}

/**
 * Draws the scenario of `seed`. Histories are kept small (at most four attempts, a few faults,
 * some tens of virtual leases) so thousands run in seconds; the odds are tuned so that every
 * documented hazard (crash windows, zombies, slow executes that ignore their signal, store faults,
 * clock steps, in-process sharing) shows up many times in a CI run of 2 000 seeds.
 */
export function drawScenario(seed: number, fenced: boolean): Scenario {
  const rng = new Prng(seed, 1);
  // Every kind is drawn whatever the protocol offers, so that a seed means the same scenario on
  // code with and without fences; without them, the fenced remote's draw becomes the marker remote.
  const drawn = rng.pick(REMOTE_KINDS);
  const remote = drawn === 'fenced' && !fenced ? 'marker' : drawn;
  const leaseMs = rng.pick([100, 400, 1000]);
  const busyWaitMs = Math.round(leaseMs * rng.pick([0.5, 2, 6]));
  const abortGraceMs = Math.round(leaseMs * rng.pick([2, 4]));
  const spread = 3 * leaseMs;
  const network: NetworkProfile = {
    latencyMs: [1, rng.pick([2, 5, Math.max(2, Math.round(leaseMs / 20))])],
    spikeChance: rng.pick([0, 0.01, 0.05]),
    spikeMaxMs: Math.round(leaseMs * rng.pick([0.2, 0.8])),
    errorAfterMs: [5, Math.round(leaseMs * rng.pick([0.25, 2]))],
    stallMs: [leaseMs, 3 * leaseMs],
  };
  const processes = Array.from(
    {
      length: rng.weighted([
        [2, 1],
        [3, 2],
        [2, 3],
      ] as const),
    },
    (_, i) => drawProcess(rng, `P${i + 1}`, leaseMs, spread),
  );
  const retry: RetryPolicy = {
    maxAttempts: rng.weighted([
      [1, 1],
      [3, 2],
      [3, 3],
      [2, 4],
    ] as const),
    backoffMs: rng.pick([10, Math.round(leaseMs / 2), leaseMs]),
    startToCloseMs: Math.round(leaseMs * rng.pick([1.5, 4, 10])),
    heartbeatTimeoutMs: leaseMs,
  };
  let next = 1;
  const attempt = (): AttemptPlan => drawAttempt(rng, next++, leaseMs, remote);
  const attempts = Array.from({ length: retry.maxAttempts }, attempt);
  const sibling = next <= 4 && rng.chance(0.15) ? attempt() : undefined;
  const rerun =
    next <= 4 && rng.chance(0.25)
      ? {
          cancelAt: rng.int(1, spread),
          afterMs: rng.int(0, leaseMs),
          attempts: Array.from({ length: rng.int(1, 5 - next) }, attempt),
        }
      : undefined;
  const wallSteps: { at: number; deltaMs: number }[] = [];
  while (wallSteps.length < 2 && rng.chance(0.3)) {
    const magnitude = Math.round(leaseMs * (0.5 + rng.float() * 4.5));
    wallSteps.push({ at: rng.int(0, spread), deltaMs: rng.chance(0.7) ? -magnitude : magnitude });
  }
  return {
    seed,
    remote,
    leaseMs,
    busyWaitMs,
    abortGraceMs,
    network,
    processes,
    retry,
    attempts,
    ...(sibling === undefined ? {} : { sibling }),
    ...(rerun === undefined ? {} : { rerun }),
    wallSteps,
  };
}

function drawProcess(rng: Prng, name: string, leaseMs: number, spread: number): ProcessPlan {
  const rate = rng.weighted([
    [5, 0],
    [3, 0.03],
    [2, 0.15],
  ] as const);
  const crash = !rng.chance(0.25)
    ? undefined
    : rng.chance(0.5)
      ? { at: rng.int(0, spread) }
      : { nth: rng.int(1, 8), phase: rng.pick(['send', 'arrive'] as const) };
  const pauses = !rng.chance(0.3)
    ? []
    : [
        {
          at: rng.int(0, spread),
          durationMs: Math.round(leaseMs * (rng.chance(0.5) ? 0.2 + rng.float() * 0.6 : 1 + rng.float() * 3)),
        },
      ];
  return {
    name,
    storeFaults: {
      rate,
      mix: [
        [4, 'lose-request'],
        [3, 'lose-response'],
        [2, 'stall'],
      ],
    },
    ...(crash === undefined ? {} : { crash }),
    pauses,
  };
}

function drawAttempt(rng: Prng, n: number, leaseMs: number, remote: RemoteKind): AttemptPlan {
  const quick = rng.int(0, 5);
  const slow = Math.round(leaseMs * (0.3 + rng.float() * 2.7));
  const verySlow = Math.round(leaseMs * (5 + rng.float() * 7));
  const checkSlow = Math.round(leaseMs * (0.3 + rng.float() * 1.5));
  const checkAfter = Math.round(leaseMs * (0.1 + rng.float() * 1.5));
  const executeAfter = Math.round(leaseMs * (0.1 + rng.float() * 2));
  return {
    name: `A${n}`,
    attempt: n,
    worker: rng.float(),
    alreadyApplied: {
      delayMs: remote === 'marker' || remote === 'fenced' ? (rng.chance(0.3) ? checkSlow : quick) : 0,
      afterMs: rng.chance(0.3) ? checkAfter : 0,
      fails: rng.chance(0.05),
    },
    execute: {
      delayMs: rng.weighted([
        [5, quick],
        [4, slow],
        [1, verySlow],
      ] as const),
      afterMs: rng.chance(0.2) ? executeAfter : 0,
      fails: rng.chance(0.07),
      honoursSignal: rng.chance(0.5),
      hangs: rng.chance(0.03),
    },
  };
}

/** The scenario as the first lines of a trace (hook times: before + after the remote request). */
export function describeScenario(s: Scenario): string[] {
  const r = s.retry;
  const lines = [
    `seed ${s.seed}: remote ${s.remote}; lease ${s.leaseMs} ms, busy wait ${s.busyWaitMs} ms, abort grace ${s.abortGraceMs} ms; latency ${s.network.latencyMs.join('-')} ms (spikes ${s.network.spikeChance * 100}% to ${s.network.spikeMaxMs} ms)`,
    `  activity: ${r.maxAttempts} attempts, start-to-close ${r.startToCloseMs} ms, heartbeat timeout ${r.heartbeatTimeoutMs} ms, backoff ${r.backoffMs} ms`,
  ];
  for (const p of s.processes) {
    const crash =
      p.crash === undefined
        ? ''
        : 'at' in p.crash
          ? `, killed at ${p.crash.at} ms`
          : `, killed ${p.crash.phase === 'send' ? 'before sending' : 'after the arrival of'} its network operation #${p.crash.nth}`;
    const pauses = p.pauses.map((x) => `, paused at ${x.at} ms for ${x.durationMs} ms`).join('');
    lines.push(`  ${p.name}: store faults ${p.storeFaults.rate * 100}%${crash}${pauses}`);
  }
  const attempt = (a: AttemptPlan, role: string): string => {
    const e = a.execute;
    const c = a.alreadyApplied;
    const exec = `${e.hangs ? 'hangs' : `${e.delayMs} + ${e.afterMs} ms`}${e.fails ? ', fails' : ''}, ${e.honoursSignal ? 'honours' : 'ignores'} its signal`;
    return `  ${a.name} (${role}): alreadyApplied ${c.delayMs} + ${c.afterMs} ms${c.fails ? ', fails' : ''}; execute ${exec}`;
  };
  for (const a of s.attempts) lines.push(attempt(a, 'run 1'));
  if (s.sibling !== undefined) lines.push(attempt(s.sibling, 'identical call in the same step'));
  if (s.rerun !== undefined) {
    lines.push(`  cancelled at ${s.rerun.cancelAt} ms, rerun with the same run id ${s.rerun.afterMs} ms later`);
    for (const a of s.rerun.attempts) lines.push(attempt(a, 'rerun'));
  }
  for (const w of s.wallSteps) {
    lines.push(`  wall clock steps ${w.deltaMs > 0 ? 'forward' : 'back'} ${Math.abs(w.deltaMs)} ms at ${w.at} ms`);
  }
  return lines;
}
