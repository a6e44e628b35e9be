// The usage a run reports and the budget that bounds it: plain JSON, shared by the workflow (which
// counts and admits steps), the model-step activity (which measures a step) and the client helpers.

/**
 * What the model steps of a run used: its own and those of its sub-agent runs (and theirs). A step
 * counts once, with the usage of the attempt that answered: an attempt that failed after the model
 * answered (a store write, a crash) is not counted, though the provider may have billed it.
 * @beta
 */
export interface RunUsage {
  /** Model steps that called the model (a step a stop condition ended before its call is not one). */
  readonly steps: number;
  /** Input (prompt) tokens, as the provider reported them; a provider that reports none adds 0. */
  readonly inputTokens: number;
  /** Output (completion) tokens, as the provider reported them. */
  readonly outputTokens: number;
  /** Cost in US dollars by the budget's `prices` (absent: the run has no price table). */
  readonly costUsd?: number;
}

/** The price of one model, in US dollars per million tokens. @beta */
export interface ModelPrice {
  /** US dollars per million input (prompt) tokens. */
  readonly inputPerMillionTokens: number;
  /** US dollars per million output (completion) tokens. */
  readonly outputPerMillionTokens: number;
}

/** Limits on a run's usage; each one set is checked. @beta */
export interface BudgetLimits {
  /** Input plus output tokens. */
  readonly tokens?: number;
  /** US dollars, by `prices`. */
  readonly costUsd?: number;
  /** Model steps. */
  readonly steps?: number;
}

/**
 * A run-wide budget: it counts every model step of the run and of its sub-agent runs, at every
 * level, and is checked before each of them. A step that starts within the budget runs to its end,
 * so the budget can be passed by the steps that are running when it runs out: one per run of the
 * tree at most. The count is workflow state: it survives activity retries, worker restarts and
 * continue-as-new; a reset to an earlier point forgets the steps after that point (they run again
 * and count again).
 * @beta
 */
export interface RunBudget extends BudgetLimits {
  /**
   * Prices by model id (the provider's response model id, else the model's `modelId`); required
   * with `costUsd`, and then for every model a step of the run tree uses (a step of a model without
   * a price fails the run with `InvalidAgentInputError`).
   */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /**
   * What happens when a step would start past a limit: `'stop'` ends the run (its output says
   * `budgetExhausted`; a sub-agent's run ends too, and its parent's model gets its text so far),
   * `'ask'` waits for a budget approval at the top run (tool name `chamvi.budget`, decided like any
   * call's approval): approving adds `raise` to the limits and the steps go on; denying or the
   * timeout stops as `'stop'` does.
   * @defaultValue `'stop'`
   */
  readonly onExhausted?: 'stop' | 'ask';
  /** What an approved budget approval adds. Default: the limits set again (`tokens`, `costUsd`, `steps`). */
  readonly raise?: BudgetLimits;
  /** How long a budget approval waits (ms, or `'3 days'`), then stops the run. @defaultValue `'7 days'` */
  readonly askTimeout?: string | number;
}

/** Why a run stopped on its budget. @beta */
export interface BudgetExhaustion {
  /** The limit reached. */
  readonly limit: keyof BudgetLimits;
  /** The limits in force (with what approvals added). */
  readonly budget: BudgetLimits;
  /** The run tree's usage when it stopped. */
  readonly used: RunUsage;
}

/** Where a sub-agent run's budget is kept: the top run of its tree, with the tree's prices. @beta */
export interface BudgetLink {
  /** The workflow id of the tree's top run, which keeps the budget and answers budget requests. */
  readonly workflowId: string;
  /** The top run's price table (`RunBudget.prices`), by model id. */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
}

/** What continue-as-new carries of the top run's budget. @beta */
export interface BudgetState {
  /** What approved budget approvals added to the limits. */
  readonly added: BudgetLimits;
  /** How many budget approvals the run raised (the next one's number). */
  readonly asks: number;
  /** The usage of the sub-agent runs that ended before the continue-as-new, as the top run counted it (absent: none). */
  readonly descendants?: RunUsage;
}

/** One model step's usage, as the model-step activity measured it. */
export interface StepUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** The model that answered (the response's model id). */
  readonly modelId: string;
}

/** No usage yet. */
export const NO_USAGE: RunUsage = { steps: 0, inputTokens: 0, outputTokens: 0 };

/** `a` and `b` together (with a cost when either has one). */
export function addUsage(a: RunUsage, b: RunUsage): RunUsage {
  const cost =
    a.costUsd !== undefined || b.costUsd !== undefined ? { costUsd: (a.costUsd ?? 0) + (b.costUsd ?? 0) } : {};
  return {
    steps: a.steps + b.steps,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...cost,
  };
}
