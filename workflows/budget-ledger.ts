// The count of a run tree against its budget: pure state and arithmetic, so the budget keeper
// (workflow code) and the simulator's budget suite run the very same rules.
import type { BudgetLimits, BudgetState, RunUsage } from '../common/run-usage.js';
import { addUsage, NO_USAGE } from '../common/run-usage.js';

/** The limit of `budget` that `used` has reached, if any. */
export function reached(budget: BudgetLimits, used: RunUsage): keyof BudgetLimits | undefined {
  if (budget.steps !== undefined && used.steps >= budget.steps) return 'steps';
  if (budget.tokens !== undefined && used.inputTokens + used.outputTokens >= budget.tokens) return 'tokens';
  if (budget.costUsd !== undefined && (used.costUsd ?? 0) >= budget.costUsd) return 'costUsd';
  return undefined;
}

export function plus(a: BudgetLimits, b: BudgetLimits): BudgetLimits {
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const tokens = sum(a.tokens, b.tokens);
  const costUsd = sum(a.costUsd, b.costUsd);
  const steps = sum(a.steps, b.steps);
  return {
    ...(tokens !== undefined ? { tokens } : {}),
    ...(costUsd !== undefined ? { costUsd } : {}),
    ...(steps !== undefined ? { steps } : {}),
  };
}

/** The larger of two counts of one run, field by field: a count only grows, so a late or forged one never lowers it. */
function larger(a: RunUsage | undefined, b: RunUsage): RunUsage {
  if (a === undefined) return b;
  const cost =
    a.costUsd !== undefined || b.costUsd !== undefined ? { costUsd: Math.max(a.costUsd ?? 0, b.costUsd ?? 0) } : {};
  return {
    steps: Math.max(a.steps, b.steps),
    inputTokens: Math.max(a.inputTokens, b.inputTokens),
    outputTokens: Math.max(a.outputTokens, b.outputTokens),
    ...cost,
  };
}

export const count = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;

export function isUsage(usage: unknown): usage is RunUsage {
  const u = usage as Partial<RunUsage> | null;
  return (
    typeof u === 'object' &&
    u !== null &&
    count(u.steps) &&
    count(u.inputTokens) &&
    count(u.outputTokens) &&
    (u.costUsd === undefined || count(u.costUsd))
  );
}

/**
 * What a top run knows of its tree's usage: its own steps, the largest count each run below it
 * sent (by workflow id, field by field, so a count never goes down), and the counts of the runs
 * that ended before the last continue-as-new, as one sum. Counts from workflow ids outside the
 * tree and malformed ones are refused.
 */
export class BudgetLedger {
  private readonly reported = new Map<string, RunUsage>();
  private own: RunUsage = NO_USAGE;
  private readonly earlier: RunUsage;
  private added: BudgetLimits;
  private asks: number;

  constructor(
    /** The limits the budget sets. */
    private readonly set: BudgetLimits,
    /** The workflow id of the top run: the runs of its tree have ids that extend it with `:`. */
    private readonly topWorkflowId: string,
    start?: BudgetState,
  ) {
    this.added = start?.added ?? {};
    this.asks = start?.asks ?? 0;
    this.earlier = start?.descendants ?? NO_USAGE;
  }

  /** The top run's own usage after a step of its own. */
  counted(own: RunUsage): void {
    this.own = larger(this.own, own);
  }

  /** A count sent by a run of the tree: `false` (and nothing counted) when it is not one, or not a count. */
  report(workflowId: unknown, usage: unknown): boolean {
    if (typeof workflowId !== 'string' || !workflowId.startsWith(`${this.topWorkflowId}:`) || !isUsage(usage))
      return false;
    this.reported.set(workflowId, larger(this.reported.get(workflowId), usage));
    return true;
  }

  /** The limits in force: the budget's, with what approvals added. */
  limits(): BudgetLimits {
    return plus(plus(this.set, {}), this.added);
  }

  /** The tree's usage as far as the top run knows it. */
  used(): RunUsage {
    return [...this.reported.values()].reduce(addUsage, addUsage(this.own, this.earlier));
  }

  /** The limit the tree has reached, if any. */
  reached(): keyof BudgetLimits | undefined {
    return reached(this.limits(), this.used());
  }

  /** Numbers the next budget approval. */
  nextAsk(): number {
    return this.asks++;
  }

  /** An approved budget approval adds `raise`. */
  raise(raise: BudgetLimits): void {
    this.added = plus(this.added, raise);
  }

  /** The limits the budget sets, without what approvals added. */
  limitsSet(): BudgetLimits {
    return plus(this.set, {});
  }

  /** What continue-as-new carries: between steps every run below has ended, so their counts become one sum. */
  state(): BudgetState {
    const descendants = [...this.reported.values()].reduce(addUsage, this.earlier);
    return { added: this.added, asks: this.asks, ...(descendants.steps > 0 ? { descendants } : {}) };
  }
}
