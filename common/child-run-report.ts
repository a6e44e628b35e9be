import type { ApprovalRecord } from './approval-types.js';
import type { RunEffectReport } from './run-effect-report.js';
import type { BudgetExhaustion, RunUsage } from './run-usage.js';

/**
 * A sub-agent run of an agent tool's call, as its parent reports it (`children` of the run's
 * output and progress). Its own run's history has the rest: `chamvi show <workflowId>`.
 * @beta
 */
export interface ChildRunReport {
  /** The parent's call that started it (two calls of one step with the same input share one child: the first). */
  readonly toolCallId: string;
  /** The agent tool's name in the parent. */
  readonly toolName: string;
  /** The sub-agent's name. */
  readonly agent: string;
  /** The parent's step that made the call (0-based). */
  readonly step: number;
  /** The child workflow's id: `<parent workflow id>:<tool>:<step>:<input hash>`. */
  readonly workflowId: string;
  /** The child's run id (`ctx.run.runId`, the prefix of its effect keys): `<parent run id>:<tool>:<step>:<input hash>`. */
  readonly runId: string;
  /** `running` until the child ends; `failed` includes a child that was cancelled or terminated. */
  readonly status: 'running' | 'completed' | 'failed';
  /** The child's effect calls, as its output lists them (a completed child only). */
  readonly effects?: RunEffectReport[];
  /** The child's approval decisions (a completed child with any). */
  readonly approvals?: ApprovalRecord[];
  /** The child's own sub-agent runs (a completed child with any). */
  readonly children?: ChildRunReport[];
  /** How many model steps the child ran (a completed child). */
  readonly steps?: number;
  /** What the child's model steps and its own sub-agents' used (a completed child). */
  readonly usage?: RunUsage;
  /** The child stopped on the tree's budget (a completed child whose run said so). */
  readonly budgetExhausted?: BudgetExhaustion;
  /** Why the child failed: its failure's type and message (a failed child). */
  readonly error?: { readonly type: string; readonly message: string };
}
