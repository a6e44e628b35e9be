import type { Client } from '@temporalio/client';
import { agentProgressQuery } from '../common/agent-progress.js';
import type { ChildRunReport } from '../common/child-run-report.js';

/**
 * The sub-agent runs of a run, as its output (a completed run) or its progress query (any other,
 * while a worker can answer) reports them; `[]` when it has none or nothing answers.
 */
export async function childRunsOf(client: Client, workflowId: string): Promise<ChildRunReport[]> {
  const handle = client.workflow.getHandle(workflowId);
  const { status } = await handle.describe();
  if (status.name === 'COMPLETED') return ((await handle.result()) as { children?: ChildRunReport[] }).children ?? [];
  return (await handle.query(agentProgressQuery).catch(() => undefined))?.children ?? [];
}

/**
 * The lines `chamvi show` prints for a run's sub-agent runs: none when it has none, else a header
 * and per child a line (agent, tool, call, step, status, workflow id), its effect calls, then its
 * own children, indented.
 */
export function childRunLines(children: readonly ChildRunReport[]): string[] {
  if (children.length === 0) return [];
  return ['sub-agent runs:', ...children.flatMap((child) => childLines(child, '  '))];
}

function childLines(child: ChildRunReport, indent: string): string[] {
  const how =
    child.status === 'failed'
      ? `failed: ${child.error?.type ?? 'Error'}: ${child.error?.message ?? ''}`
      : child.status === 'completed'
        ? `completed, ${child.steps ?? 0} step${child.steps === 1 ? '' : 's'}`
        : 'running';
  const head = `${indent}${child.agent} via ${child.toolName} [${child.toolCallId}] (step ${child.step}): ${how} · workflow ${child.workflowId}`;
  const effects = (child.effects ?? []).map(
    (e) =>
      `${indent}  ${e.toolName} [${e.toolCallId ?? ''}] ${e.outcome} (${e.attempts} attempt${e.attempts === 1 ? '' : 's'}) · ${e.key}`,
  );
  return [head, ...effects, ...(child.children ?? []).flatMap((c) => childLines(c, `${indent}  `))];
}
