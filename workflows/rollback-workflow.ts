import { setHandler } from '@temporalio/workflow';
import { toFailure } from '../common/to-failure.js';
import { agentProgressQuery, type AgentProgress } from '../common/agent-progress.js';
import { RollbackIncompleteError } from '../src/errors/errors.js';
import { compensateApplied, markCompensated } from './compensations.js';
import type { AppliedEffect, RunEffectReport, StoreActivityOptions, ToolActivityOptions } from '../common/index.js';

/** Input of {@link rollbackWorkflow}: the finished run, as `rollbackRun` read it. @beta */
export interface RollbackWorkflowInput {
  /** The run as its activities saw it (agent, run id, trigger, state, artifacts). */
  readonly run: {
    readonly agent: string;
    readonly runId: string;
    readonly trigger?: unknown;
    readonly state?: Record<string, unknown>;
    readonly artifacts?: Record<string, unknown>;
  };
  /** Its applied effect calls, in order of application. */
  readonly applied: AppliedEffect[];
  /** Its effect report, which the rollback's report annotates. */
  readonly effects: RunEffectReport[];
  /** Activity options of the compensations (`compensate`) and of the record writes (`store`); defaults as in the run. */
  readonly activityOptions?: {
    readonly compensate?: ToolActivityOptions;
    readonly store?: StoreActivityOptions;
  };
}

/** What a rollback returns: the run's effect report with each compensated call's `compensation`. @beta */
export interface RollbackOutput {
  /** The rolled-back run's id (`ctx.run.runId`). */
  readonly runId: string;
  /** The run's effect report, each compensated call with its `compensation`. */
  readonly effects: RunEffectReport[];
  /** Compensations run (calls whose tool has `compensate`). */
  readonly compensated: number;
}

/**
 * Rolls a finished run back: runs the compensations of its applied effects, in reverse order of
 * application, in a non-cancellable scope (see `compensateApplied`). Started by `rollbackRun`, under
 * a workflow id derived from the run's; each compensation's activity checks the call against the
 * store's record, so the input is not trusted for what to undo. An undo done before (by the run's
 * own `compensateOn`, or an earlier rollback) is answered from its record and not applied again.
 * Fails with `RollbackIncompleteError` when a compensation kept failing; a later rollback retries
 * what is left.
 * @beta
 */
export async function rollbackWorkflow(input: RollbackWorkflowInput): Promise<RollbackOutput> {
  const effects = [...input.effects];
  let status: AgentProgress['status'] = 'compensating';
  setHandler(agentProgressQuery, () => ({
    runId: input.run.runId,
    agent: input.run.agent,
    step: 0,
    status,
    conversation: { pending: [] },
    effects: [...effects],
    approvals: [],
  }));
  const tally = await compensateApplied(input.run, input.applied, {
    ...(input.activityOptions?.compensate !== undefined ? { activityOptions: input.activityOptions.compensate } : {}),
    ...(input.activityOptions?.store !== undefined ? { storeOptions: input.activityOptions.store } : {}),
    onCompensated: (key, report) => markCompensated(effects, key, report),
  });
  if (tally.failed > 0) {
    status = 'rollback-incomplete';
    throw toFailure(new RollbackIncompleteError({ runId: input.run.runId, ...tally }), { details: [{ effects }] });
  }
  status = 'rolled-back';
  return { runId: input.run.runId, effects, compensated: tally.total };
}
