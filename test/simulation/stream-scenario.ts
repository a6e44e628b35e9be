import { Prng } from './prng.js';

/** How the stream store answers appends in a history. */
export interface StreamStoreHealth {
  /** Chance that one append meets a fault (slow, stalled, failed, its answer late or lost). */
  readonly faultRate: number;
  /** Periods where every append is held (a black-holed database): released at `until`, or never. */
  readonly blackHoles: readonly { readonly from: number; readonly until: number; readonly released: boolean }[];
}

/** One workflow streaming under a run id: its executions (a reset's, a continue-as-new's) and their model steps. */
export interface StreamWorkflowPlan {
  readonly name: string;
  readonly runId: string;
  readonly startAt: number;
  readonly steps: number;
  /** A new execution (reset or continue-as-new) takes over after this many steps of the first. */
  readonly newExecutionAfter?: { readonly steps: number; readonly kind: 'reset' | 'continue-as-new' };
}

/** A reader following one workflow: one or more sessions, each resuming after the last cursor of the one before. */
export interface StreamReaderPlan {
  readonly name: string;
  /** `raw`: `readRunStream`; `page`: `runUIMessageStream`, as a chat page follows a run. */
  readonly kind: 'raw' | 'page';
  /** Index of the workflow it follows. */
  readonly workflow: number;
  readonly startAt: number;
  /** Where the first session starts: from the start, after a random batch committed by then, or a forged cursor. */
  readonly from:
    | { readonly kind: 'start' }
    | { readonly kind: 'cursor'; readonly pick: number }
    | { readonly kind: 'forged'; readonly value: unknown };
  /** Sessions end (the page is closed) at these virtual times and resume `pauseMs` later. */
  readonly breaks: readonly { readonly at: number; readonly pauseMs: number }[];
}

export interface StreamScenario {
  readonly seed: number;
  readonly backend: 'memory' | 'sqlite';
  /** The stream store's `retentionMs`. */
  readonly retentionMs: number;
  /** The model step's start-to-close timeout. */
  readonly startToCloseMs: number;
  readonly health: StreamStoreHealth;
  readonly workflows: readonly StreamWorkflowPlan[];
  readonly readers: readonly StreamReaderPlan[];
  readonly prunes: readonly number[];
  /** The process closes the store (a shutdown) while readers may be waiting. */
  readonly closeAt?: number;
}

/** A cursor as a message shows it (a string quoted, so that "3" and 3 differ). */
export function showCursor(value: unknown): string {
  if (value === undefined) return '(none: from the start)';
  return typeof value === 'string' ? JSON.stringify(value) : typeof value === 'number' ? String(value) : typeof value;
}

export const FORGED_CURSORS: readonly unknown[] = [Number.NaN, -1, 'abc', 1.5, Number.POSITIVE_INFINITY];

/** Draws the stream history of `seed`. */
export function drawStreamScenario(seed: number): StreamScenario {
  const rng = new Prng(seed, 40);
  const retentionMs = rng.pick([20_000, 60_000, 600_000]);
  const backend = rng.chance(0.1) ? 'sqlite' : 'memory';
  const health = drawHealth(rng, retentionMs);
  const workflows: StreamWorkflowPlan[] = [];
  const count = rng.weighted([
    [6, 1],
    [4, 2],
  ] as const);
  for (let i = 0; i < count; i++) {
    const steps = rng.weighted([
      [7, rng.int(1, 3)],
      [3, rng.int(4, 6)],
    ] as const);
    workflows.push({
      name: `W${i + 1}`,
      // A second workflow under the same run id: a custom run id reused while the first streams.
      runId: i === 0 || rng.chance(0.3) ? 'run-1' : `run-${i + 1}`,
      startAt: i === 0 ? 0 : rng.int(0, 10_000),
      steps,
      ...(rng.chance(0.3)
        ? { newExecutionAfter: { steps: rng.int(0, steps), kind: rng.pick(['reset', 'continue-as-new'] as const) } }
        : {}),
    });
  }
  const readers: StreamReaderPlan[] = [];
  for (let i = 0; i < rng.int(1, 3); i++) {
    const startAt = rng.weighted([
      [5, 0],
      [5, rng.int(0, 20_000)],
    ] as const);
    const from = rng.weighted<StreamReaderPlan['from']>([
      [6, { kind: 'start' }],
      [3, { kind: 'cursor', pick: rng.float() }],
      [1, { kind: 'forged', value: rng.pick(FORGED_CURSORS) }],
    ]);
    const breaks = Array.from(
      {
        length: rng.weighted([
          [6, 0],
          [3, 1],
          [1, 2],
        ] as const),
      },
      () => ({
        at: startAt + rng.int(1, 30_000),
        pauseMs: rng.weighted([
          [5, rng.int(1, 5000)],
          [1, rng.int(retentionMs, 3 * retentionMs)],
        ] as const),
      }),
    ).sort((a, b) => a.at - b.at);
    const kind = rng.chance(0.4) ? 'page' : 'raw';
    readers.push({
      name: `${kind === 'page' ? 'P' : 'R'}${i + 1}`,
      kind,
      workflow: rng.int(0, workflows.length - 1),
      startAt,
      from,
      breaks,
    });
  }
  const prunes: number[] = [];
  const every = retentionMs / rng.pick([1, 2, 4]);
  for (let at = rng.float() * every; at < 6 * retentionMs; at += every * (0.5 + rng.float()))
    prunes.push(Math.round(at));
  const closeAt = rng.chance(0.15) ? rng.int(1000, 60_000) : undefined;
  return {
    seed,
    backend,
    retentionMs,
    startToCloseMs: 10_000,
    health,
    workflows,
    readers,
    prunes,
    ...(closeAt === undefined ? {} : { closeAt }),
  };
}

function drawHealth(rng: Prng, retentionMs: number): StreamStoreHealth {
  const kind = rng.weighted([
    [5, 'healthy'],
    [3, 'flaky'],
    [2, 'black-hole'],
  ] as const);
  if (kind === 'healthy') return { faultRate: 0, blackHoles: [] };
  if (kind === 'flaky') return { faultRate: rng.pick([0.05, 0.2, 0.5]), blackHoles: [] };
  const from = rng.int(0, 15_000);
  const until =
    from +
    rng.weighted([
      [3, rng.int(100, 5000)],
      [1, rng.int(5000, retentionMs)],
    ] as const);
  return { faultRate: 0, blackHoles: [{ from, until, released: rng.chance(0.6) }] };
}

/** The scenario in a few lines, for the trace. */
export function describeStreamScenario(s: StreamScenario): string[] {
  const hole = s.health.blackHoles
    .map((h) => `, black hole ${h.from}-${h.until} ms (${h.released ? 'released' : 'never answers'})`)
    .join('');
  const lines = [
    `stream seed ${s.seed}: ${s.backend} store, retention ${s.retentionMs} ms, ${s.prunes.length} prunes, fault rate ${s.health.faultRate}${hole}${s.closeAt === undefined ? '' : `, closed at ${s.closeAt} ms`}`,
  ];
  for (const w of s.workflows) {
    const next =
      w.newExecutionAfter === undefined ? '' : `, ${w.newExecutionAfter.kind} after ${w.newExecutionAfter.steps} steps`;
    lines.push(`  ${w.name}: run id ${w.runId}, starts at ${w.startAt} ms, ${w.steps} steps${next}`);
  }
  for (const r of s.readers) {
    const from =
      r.from.kind === 'forged'
        ? `forged cursor ${showCursor(r.from.value)}`
        : r.from.kind === 'cursor'
          ? `a cursor (${r.from.pick.toFixed(2)})`
          : 'the start';
    const breaks = r.breaks.map((b) => `closed at ${b.at} ms for ${b.pauseMs} ms`).join(', ');
    lines.push(
      `  ${r.name}: follows W${r.workflow + 1} from ${r.startAt} ms, from ${from}${breaks === '' ? '' : `; ${breaks}`}`,
    );
  }
  return lines;
}
