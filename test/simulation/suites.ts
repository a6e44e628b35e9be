import { simulateBudget } from './budget-simulate.js';
import { simulateConversation } from './conversation-simulate.js';
import type { Violation } from './invariants.js';
import { detectProtocol, simulate } from './simulate.js';
import { closeBudgetMs, simulateStream } from './stream-simulate.js';

/** The simulator's suites: the effect protocol, the conversation store, the run streams, the budgets of run trees. */
export const SUITES = ['effects', 'conversation', 'stream', 'budget'] as const;
export type SuiteName = (typeof SUITES)[number];

/** One seed's outcome, whatever the suite. */
export interface SuiteSeedResult {
  readonly violations: readonly Violation[];
  /** The history, readable (rendered on demand). */
  readonly trace: () => string;
  /** Counts summed over the run (applications, executions, batches...). */
  readonly counts: Readonly<Record<string, number>>;
  /** Lines printed with --verbose besides the trace (the effect suite's documented duplicates). */
  readonly notes: readonly string[];
}

/** A suite ready to run seeds, with what it detected of the code under test. */
export interface PreparedSuite {
  readonly name: SuiteName;
  /** What the summary line says of the setup (the protocol's fence, the stream's budget). */
  readonly setup: string;
  run(seed: number): Promise<SuiteSeedResult>;
}

/** Detects what the code under test offers and returns the suite's runner. */
export async function prepareSuite(name: SuiteName): Promise<PreparedSuite> {
  if (name === 'effects') {
    const features = await detectProtocol();
    return {
      name,
      setup: features.fenceOf === undefined ? 'no fence offered by the protocol: fenced remote drawn as marker' : '',
      async run(seed) {
        const r = await simulate(seed, features);
        const counts: Record<string, number> = { applications: r.applications };
        for (const e of r.explained) counts[`documented ${e.cause}`] = (counts[`documented ${e.cause}`] ?? 0) + 1;
        return {
          violations: r.violations,
          trace: () => r.trace,
          counts,
          notes: r.explained.map((e) => `documented duplicate, ${e.cause}: ${e.because}`),
        };
      },
    };
  }
  if (name === 'conversation') {
    return {
      name,
      setup: '',
      async run(seed) {
        const r = await simulateConversation(seed);
        return { violations: r.violations, trace: r.trace, counts: { executions: r.executions }, notes: [] };
      },
    };
  }
  if (name === 'budget') {
    return {
      name,
      setup: '',
      run(seed) {
        const r = simulateBudget(seed);
        return Promise.resolve({ violations: r.violations, trace: r.trace, counts: { steps: r.steps }, notes: [] });
      },
    };
  }
  const budgetMs = await closeBudgetMs();
  return {
    name,
    setup: `close budget ${budgetMs} ms`,
    async run(seed) {
      const r = await simulateStream(seed, budgetMs);
      const counts: Record<string, number> = { batches: r.batches };
      for (const [cause, n] of Object.entries(r.documented)) counts[`documented ${cause}`] = n;
      const notes = Object.entries(r.documented).map(([cause, n]) => `documented, ${cause}: ${n} pages`);
      return { violations: r.violations, trace: r.trace, counts, notes };
    },
  };
}
