import type { Client } from '@temporalio/client';
import { agentProgressQuery } from '../common/agent-progress.js';
import type { RunEffectReport } from '../common/run-effect-report.js';
import { rollbackWorkflowId } from '../client/rollback-run.js';

/**
 * The run's effect report with the latest compensations: its own (`compensateOn`), overlaid by
 * those of its rollback workflow when `rollbackRun` ran one. `undefined` when neither answers (no
 * worker to answer the query of a run that did not complete).
 */
export async function compensatedEffects(client: Client, workflowId: string): Promise<RunEffectReport[] | undefined> {
  const own = await effectsOf(client, workflowId);
  const rollback = await effectsOf(client, rollbackWorkflowId(workflowId)).catch(() => undefined);
  if (own === undefined || rollback === undefined) return own ?? rollback;
  return own.map((effect, i) => {
    const later = rollback[i];
    return later?.compensation !== undefined && later.key === effect.key ? later : effect;
  });
}

async function effectsOf(client: Client, workflowId: string): Promise<RunEffectReport[] | undefined> {
  const handle = client.workflow.getHandle(workflowId);
  const { status } = await handle.describe();
  if (status.name === 'COMPLETED') return ((await handle.result()) as { effects: RunEffectReport[] }).effects;
  return (await handle.query(agentProgressQuery).catch(() => undefined))?.effects;
}

/**
 * The lines `chamvi show` prints for a run's compensations: none when nothing was compensated,
 * else a header saying whether the rollback is complete and one line per compensated call.
 */
export function compensationLines(effects: readonly RunEffectReport[]): string[] {
  const compensated = effects.filter((e) => e.compensation !== undefined);
  if (compensated.length === 0) return [];
  const failed = compensated.filter((e) => e.compensation?.status === 'compensation-failed').length;
  const head =
    failed === 0
      ? `compensations (rolled back, ${compensated.length} undone):`
      : `compensations (rollback incomplete: ${failed} of ${compensated.length} failed):`;
  return [head, ...compensated.map(compensationLine)];
}

function compensationLine(effect: RunEffectReport): string {
  const c = effect.compensation;
  const attempts = `${c?.attempts ?? 0} attempt${c?.attempts === 1 ? '' : 's'}`;
  const what =
    c?.status === 'compensated'
      ? `compensated (${c.outcome ?? 'executed'}, ${attempts})`
      : `compensation-failed after ${attempts}: ${c?.error?.type ?? 'Error'}: ${c?.error?.message ?? ''}`;
  return `  ${effect.toolName} [${effect.toolCallId ?? ''}] ${what} · ${effect.key}`;
}
