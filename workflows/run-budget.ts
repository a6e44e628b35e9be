import {
  condition,
  defineSignal,
  getExternalWorkflowHandle,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { toFailure } from '../common/to-failure.js';
import { InvalidAgentInputError } from '../src/errors/errors.js';
import { addUsage } from '../common/run-usage.js';
import { BudgetLedger, count } from './budget-ledger.js';
import { durationMs, type ApprovalGate } from './approvals.js';
import type {
  ApprovalRecord,
  BudgetExhaustion,
  BudgetLink,
  BudgetState,
  BudgetLimits,
  ModelPrice,
  RunBudget,
  RunRef,
  RunUsage,
  StepUsage,
} from '../common/index.js';

/** A run of the tree asks the top run, before each of its steps, whether the budget admits it. */
export interface BudgetRequest {
  readonly workflowId: string;
  readonly step: number;
  /** The asking run's own usage so far (its sub-agents ask for themselves). */
  readonly usage: RunUsage;
  /** The run has ended: this is its last count, and it waits for no answer. */
  readonly final?: boolean;
}

/** The top run's answer to a {@link BudgetRequest}. */
export interface BudgetGrant {
  readonly step: number;
  readonly exhausted?: BudgetExhaustion;
}

export const budgetRequestSignal = defineSignal<[BudgetRequest]>('chamvi.budgetRequest');
export const budgetGrantSignal = defineSignal<[BudgetGrant]>('chamvi.budgetGrant');

/** Admits a run's steps: `undefined` lets the step run, an exhaustion ends the run. */
export interface StepAdmission {
  admit(step: number, own: RunUsage): Promise<BudgetExhaustion | undefined>;
  /** The run has ended with `own` as its usage. */
  ended(own: RunUsage): Promise<void>;
}

/** The usage of `step` priced by `prices`, for a run whose usage so far is `own`. */
export function countStep(
  own: RunUsage,
  step: StepUsage,
  prices: Readonly<Record<string, ModelPrice>> | undefined,
): RunUsage {
  const counted = { steps: 1, inputTokens: step.inputTokens, outputTokens: step.outputTokens };
  if (prices === undefined) return addUsage(own, counted);
  const price = Object.hasOwn(prices, step.modelId) ? prices[step.modelId] : undefined;
  if (price === undefined) {
    throw toFailure(
      new InvalidAgentInputError(
        `The run's budget prices its steps, but has no price for model "${step.modelId}", which answered a step: add "${step.modelId}" to budget.prices.`,
      ),
    );
  }
  const costUsd =
    (step.inputTokens * price.inputPerMillionTokens + step.outputTokens * price.outputPerMillionTokens) / 1_000_000;
  return addUsage(own, { ...counted, costUsd });
}

/**
 * The budget of a top run: a {@link BudgetLedger} of the whole tree (its own steps, and what each
 * sub-agent run below it sent by signal `chamvi.budgetRequest`) against the limits, the answers to
 * those requests (signal `chamvi.budgetGrant`), and the budget approvals of `onExhausted: 'ask'`
 * through the run's approval gate. Workflow state, so it survives worker restarts; continue-as-new
 * carries {@link BudgetState}.
 */
export class BudgetKeeper implements StepAdmission {
  private readonly ledger: BudgetLedger;
  private asking: Promise<boolean> | undefined;
  private refused: BudgetExhaustion | undefined;

  constructor(
    private readonly run: RunRef,
    private readonly budget: RunBudget,
    private readonly gate: ApprovalGate,
    private readonly decided: (approval: ApprovalRecord) => void,
    state: BudgetState | undefined,
  ) {
    this.ledger = new BudgetLedger(budget, workflowInfo().workflowId, state);
    setHandler(budgetRequestSignal, async (request) => {
      // Only a run of this tree (its workflow id extends this one's) with a well-formed count is counted.
      if (!this.ledger.report(request?.workflowId, request?.usage)) {
        log.warn('Ignored a budget request that is not from a sub-agent run of this run', {
          workflowId: request?.workflowId,
        });
        return;
      }
      if (request.final === true || !Number.isSafeInteger(request.step)) return;
      const exhausted = await this.admit(request.step);
      await getExternalWorkflowHandle(request.workflowId)
        .signal(budgetGrantSignal, { step: request.step, ...(exhausted !== undefined ? { exhausted } : {}) })
        // A run that has ended meanwhile asks for nothing more.
        .catch(() => undefined);
    });
  }

  limits(): BudgetLimits {
    return this.ledger.limits();
  }

  used(): RunUsage {
    return this.ledger.used();
  }

  state(): BudgetState {
    return this.ledger.state();
  }

  /** This run's own usage, after each of its steps: its sub-agent runs' requests are answered with it. */
  counted(own: RunUsage): void {
    this.ledger.counted(own);
  }

  async admit(step: number, own?: RunUsage): Promise<BudgetExhaustion | undefined> {
    if (own !== undefined) this.ledger.counted(own);
    for (;;) {
      const limit = this.ledger.reached();
      if (limit === undefined) return undefined;
      const exhausted: BudgetExhaustion = { limit, budget: this.ledger.limits(), used: this.ledger.used() };
      if (this.refused !== undefined || this.budget.onExhausted !== 'ask') return (this.refused ??= exhausted);
      // Runs that ask while a budget approval waits wait for the same decision.
      this.asking ??= this.ask(exhausted, step).finally(() => (this.asking = undefined));
      if (!(await this.asking)) return (this.refused ??= exhausted);
    }
  }

  ended(): Promise<void> {
    return Promise.resolve();
  }

  /** Asks for a raise through the approval gate: `true` when an approver approved it (the raise is added). */
  private async ask(exhausted: BudgetExhaustion, step: number): Promise<boolean> {
    const raise = this.budget.raise ?? this.ledger.limitsSet();
    const n = this.ledger.nextAsk();
    const used = exhausted.used;
    const decision = await this.gate.decisionFor(
      {
        toolCallId: `budget-${n}`,
        toolName: 'chamvi.budget',
        kind: 'plain',
        key: `${this.run.runId}:budget:${n}`,
        input: { limit: exhausted.limit, budget: exhausted.budget, used, add: raise },
        approval: {
          status: 'user-approval',
          reason: `The run's ${exhausted.limit} budget is used up (${describe(exhausted.budget, used)}); approve to add ${describeLimits(raise)}, deny to stop the run.`,
          ...(this.budget.askTimeout !== undefined ? { timeout: this.budget.askTimeout } : {}),
          onTimeout: 'deny',
        },
      },
      step,
    );
    this.decided(decision);
    if (decision.approved) this.ledger.raise(raise);
    return decision.approved;
  }
}

function describeLimits(limits: BudgetLimits): string {
  const parts = [
    limits.tokens !== undefined ? `${limits.tokens} tokens` : undefined,
    limits.costUsd !== undefined ? `$${limits.costUsd}` : undefined,
    limits.steps !== undefined ? `${limits.steps} steps` : undefined,
  ];
  return parts.filter((p) => p !== undefined).join(', ') || 'nothing';
}

function describe(budget: BudgetLimits, used: RunUsage): string {
  const tokens = used.inputTokens + used.outputTokens;
  return `used ${used.steps} steps, ${tokens} tokens${used.costUsd !== undefined ? `, $${used.costUsd.toFixed(4)}` : ''} of ${describeLimits(budget)}`;
}

/**
 * The budget of a sub-agent run of a run with a budget: before each step it asks the top run
 * (signal `chamvi.budgetRequest` with its own count) and waits for the answer (signal
 * `chamvi.budgetGrant`); when it ends, it sends its last count.
 */
export class RemoteBudget implements StepAdmission {
  private readonly grants = new Map<number, BudgetGrant>();

  constructor(private readonly link: BudgetLink) {
    setHandler(budgetGrantSignal, (grant) => {
      if (Number.isSafeInteger(grant?.step)) this.grants.set(grant.step, grant);
    });
  }

  async admit(step: number, own: RunUsage): Promise<BudgetExhaustion | undefined> {
    this.grants.delete(step);
    await this.top().signal(budgetRequestSignal, { workflowId: workflowInfo().workflowId, step, usage: own });
    await condition(() => this.grants.has(step));
    return this.grants.get(step)?.exhausted;
  }

  async ended(own: RunUsage): Promise<void> {
    await this.top()
      .signal(budgetRequestSignal, { workflowId: workflowInfo().workflowId, step: -1, usage: own, final: true })
      .catch(() => undefined);
  }

  private top() {
    return getExternalWorkflowHandle(this.link.workflowId);
  }
}

/**
 * Checks a run's budget before its first step: every limit a positive number, `onExhausted` one of
 * its two words, a price for each model given as two non-negative numbers, `costUsd` with prices.
 * @throws ApplicationFailure `InvalidAgentInputError` (the run fails at once) naming what is wrong.
 */
export function checkBudget(budget: RunBudget): void {
  const problems: string[] = [];
  if (typeof budget !== 'object' || budget === null) problems.push('budget must be an object');
  else {
    for (const [name, limits] of [
      ['budget', budget],
      ['budget.raise', budget.raise ?? {}],
    ] as const) {
      for (const field of ['tokens', 'costUsd', 'steps'] as const) {
        const value = limits[field];
        if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0))
          problems.push(`${name}.${field} must be a positive number (got ${JSON.stringify(value)})`);
      }
    }
    if (budget.tokens === undefined && budget.costUsd === undefined && budget.steps === undefined)
      problems.push('a budget needs at least one of tokens, costUsd or steps');
    if (budget.onExhausted !== undefined && budget.onExhausted !== 'stop' && budget.onExhausted !== 'ask')
      problems.push(`budget.onExhausted must be 'stop' or 'ask' (got ${JSON.stringify(budget.onExhausted)})`);
    if (budget.askTimeout !== undefined) durationMs(budget.askTimeout);
    if (budget.costUsd !== undefined && budget.prices === undefined)
      problems.push('budget.costUsd needs budget.prices: the price per million tokens of each model the run uses');
    for (const [model, price] of Object.entries(budget.prices ?? {})) {
      if (!count(price?.inputPerMillionTokens) || !count(price?.outputPerMillionTokens))
        problems.push(
          `budget.prices["${model}"] must be { inputPerMillionTokens, outputPerMillionTokens }, two non-negative numbers`,
        );
    }
  }
  if (problems.length > 0) {
    throw toFailure(new InvalidAgentInputError(`The run's budget cannot be used: ${problems.join('; ')}.`));
  }
}
