import { Prng } from './prng.js';

/** A worker process of the conversation history: its own `ConversationLog` and cache. */
export interface ConvWorkerPlan {
  readonly name: string;
  /** Budget of its `ConversationCache`: 0 caches nothing (every load reads the store). */
  readonly cacheBytes: number;
  /** Virtual times it restarts (its cache is lost; an attempt running on it dies). */
  readonly restarts: readonly number[];
}

/** One workflow (a chain of executions under one run id): its prompt and what Temporal does to it. */
export interface ConvWorkflowPlan {
  readonly name: string;
  /** `ctx.run.runId`: shared with another workflow when a custom run id is reused. */
  readonly runId: string;
  readonly prompt: string;
  readonly startAt: number;
  readonly maxSteps: number;
  /**
   * A reset while step `duringStep` runs (`afterMs` after it started; after the close when the
   * workflow closed before it), to the step `toFraction` of the way through those done.
   */
  readonly reset?: { readonly duringStep: number; readonly afterMs: number; readonly toFraction: number };
  /** Continue-as-new after this step. */
  readonly continueAsNewAfter?: number;
}

export const TAMPER_KINDS = ['edit', 'garbage', 'plant', 'delete', 'cycle', 'self-parent', 'reparent'] as const;
/** What someone with the database's credentials does to a conversation row. */
export type TamperKind = (typeof TAMPER_KINDS)[number];

/** Everything drawn before the history runs (each step's details are drawn as it runs, from its workflow's stream). */
export interface ConversationScenario {
  readonly seed: number;
  readonly backend: 'memory' | 'sqlite';
  /** The store's `retentionMs`. */
  readonly retentionMs: number;
  /** The model step's start-to-close timeout: an attempt still running then is a zombie. */
  readonly startToCloseMs: number;
  readonly workers: readonly ConvWorkerPlan[];
  readonly workflows: readonly ConvWorkflowPlan[];
  /** `prune(limit)` calls, by virtual time. */
  readonly prunes: readonly { readonly at: number; readonly limit: number }[];
  readonly tampers: readonly { readonly at: number; readonly kind: TamperKind; readonly pick: number }[];
}

/** Draws the history of `seed`. */
export function drawConversationScenario(seed: number): ConversationScenario {
  const rng = new Prng(seed, 20);
  const retentionMs = rng.pick([60_000, 300_000, 3_600_000]);
  const backend = rng.chance(0.1) ? 'sqlite' : 'memory';
  const workers = Array.from({ length: rng.int(1, 3) }, (_, i) => ({
    name: `P${i + 1}`,
    cacheBytes: rng.weighted([
      [3, 0],
      [3, 1500],
      [4, 64 * 1024 * 1024],
    ] as const),
    restarts: Array.from(
      {
        length: rng.weighted([
          [6, 0],
          [3, 1],
          [1, 2],
        ] as const),
      },
      () => rng.int(0, 3 * retentionMs),
    ).sort((a, b) => a - b),
  }));
  const workflows: ConvWorkflowPlan[] = [];
  const count = rng.weighted([
    [5, 1],
    [4, 2],
    [1, 3],
  ] as const);
  for (let i = 0; i < count; i++) {
    const first = workflows[0];
    const sharesRun = first !== undefined && rng.chance(0.6);
    const maxSteps = rng.weighted([
      [6, rng.int(1, 3)],
      [3, rng.int(4, 6)],
      [1, rng.int(7, 10)],
    ] as const);
    workflows.push({
      name: `W${i + 1}`,
      runId: sharesRun ? first.runId : `run-${i + 1}`,
      prompt: first !== undefined && rng.chance(0.5) ? first.prompt : `prompt ${seed}.${i + 1}`,
      startAt: i === 0 ? 0 : rng.int(0, retentionMs),
      maxSteps,
      ...(rng.chance(0.3)
        ? { reset: { duringStep: rng.int(0, maxSteps), afterMs: rng.int(1, 1500), toFraction: rng.float() } }
        : {}),
      ...(rng.chance(0.15) ? { continueAsNewAfter: rng.int(0, maxSteps - 1) } : {}),
    });
  }
  const prunes: Array<{ at: number; limit: number }> = [];
  const every = retentionMs / rng.pick([1, 2, 4]);
  for (let at = rng.float() * every; at < 5 * retentionMs; at += every * (0.5 + rng.float())) {
    prunes.push({
      at: Math.round(at),
      limit: rng.weighted([
        [3, 1],
        [3, 5],
        [4, 1000],
      ] as const),
    });
  }
  const tampers = rng.chance(0.35)
    ? Array.from({ length: rng.int(1, 2) }, () => ({
        at: rng.int(0, 2 * retentionMs),
        kind: rng.pick(TAMPER_KINDS),
        pick: rng.float(),
      })).sort((a, b) => a.at - b.at)
    : [];
  return { seed, backend, retentionMs, startToCloseMs: 2000, workers, workflows, prunes, tampers };
}

/** The scenario in a few lines, for the trace. */
export function describeConversationScenario(s: ConversationScenario): string[] {
  const lines = [
    `conversation seed ${s.seed}: ${s.backend} store, retention ${s.retentionMs} ms, ${s.prunes.length} prunes, start-to-close ${s.startToCloseMs} ms`,
  ];
  for (const w of s.workers) {
    lines.push(
      `  ${w.name}: cache ${w.cacheBytes} bytes${w.restarts.length > 0 ? `, restarts at ${w.restarts.join(', ')} ms` : ''}`,
    );
  }
  for (const w of s.workflows) {
    const extra = [
      w.reset === undefined
        ? ''
        : `, reset during step ${w.reset.duringStep} (+${w.reset.afterMs} ms) to ${w.reset.toFraction.toFixed(2)} of its steps`,
      w.continueAsNewAfter === undefined ? '' : `, continue-as-new after step ${w.continueAsNewAfter}`,
    ].join('');
    lines.push(
      `  ${w.name}: run id ${w.runId}, "${w.prompt}", starts at ${w.startAt} ms, up to ${w.maxSteps} steps${extra}`,
    );
  }
  for (const t of s.tampers) lines.push(`  tamper at ${t.at} ms: ${t.kind} (pick ${t.pick.toFixed(2)})`);
  return lines;
}
