import { CancellationScope, proxyActivities } from '@temporalio/workflow';
import { DEFAULT_TOOL_OPTIONS, toActivityOptions } from '../common/activity-options.js';
import { ACTIVITY_NAMES } from '../common/activity-names.js';
import { attemptsOf, lastError } from './call-failures.js';
import { recordLater } from './tool-dispatch.js';
import type {
  AppliedEffect,
  ChamviActivities,
  CompensationReport,
  RunEffectReport,
  RunRef,
  StoreActivityOptions,
  ToolActivityOptions,
} from '../common/index.js';

/** How a run's compensations ended: how many ran (tools with `compensate`), how many kept failing. */
export interface CompensationTally {
  readonly total: number;
  readonly failed: number;
}

/** What {@link compensateApplied} needs besides the run. */
export interface CompensationSettings {
  /** Activity options of each `chamvi.compensate` activity (over the tool defaults). */
  readonly activityOptions?: ToolActivityOptions;
  /** Activity options of the effect-store activity that writes an undo's record its activity could not. */
  readonly storeOptions?: StoreActivityOptions;
  /** Told each call's compensation as it ends, with the key of the effect it undid. */
  readonly onCompensated?: (key: string, report: CompensationReport) => void;
}

/**
 * Undoes a run's applied effects, one `chamvi.compensate` activity at a time, in reverse order of
 * application (the last applied is undone first), each key once whatever number of calls shared
 * it. A compensation that fails after its retries is reported and the others still run: one undo
 * that cannot be done must not keep the rest in place.
 *
 * The whole sequence runs in a non-cancellable scope: a cancel of the run (or of a rollback) that
 * arrives meanwhile cannot cut an undo short or leave the later ones out; it takes effect when the
 * last one ended.
 */
export function compensateApplied(
  run: RunRef,
  applied: readonly AppliedEffect[],
  settings: CompensationSettings,
): Promise<CompensationTally> {
  return CancellationScope.nonCancellable(async () => {
    const seen = new Set<string>();
    const options = toActivityOptions(DEFAULT_TOOL_OPTIONS, settings.activityOptions);
    let total = 0;
    let failed = 0;
    for (const effect of [...applied].reverse()) {
      if (seen.has(effect.key)) continue;
      seen.add(effect.key);
      let report: CompensationReport;
      try {
        const activities = proxyActivities<ChamviActivities>({
          ...options,
          summary: `compensate ${effect.toolName} · key ${effect.key}`.slice(0, 200),
        });
        const answer = await activities[ACTIVITY_NAMES.compensate]({ ...run, ...effect });
        if (answer.status === 'no-compensation') continue;
        await recordLater(answer, settings.storeOptions);
        report = { status: 'compensated', outcome: answer.outcome, attempts: answer.attempts };
      } catch (error) {
        failed += 1;
        report = {
          status: 'compensation-failed',
          attempts: attemptsOf(error, settings.activityOptions),
          error: lastError(error),
        };
      }
      total += 1;
      settings.onCompensated?.(effect.key, report);
    }
    return { total, failed };
  });
}

/** Puts `report` on the applied call of `key` in `effects` (the one that executed or reconciled it). */
export function markCompensated(effects: RunEffectReport[], key: string, report: CompensationReport): void {
  const at = effects.findIndex((e) => e.key === key && (e.outcome === 'executed' || e.outcome === 'reconciled'));
  const effect = effects[at];
  if (effect !== undefined) effects[at] = { ...effect, compensation: report };
}
