import {
  ApprovalNotPendingError,
  ApprovalSecretMissingError,
  decideApproval,
  listPendingApprovals,
} from '../client/approvals-client.js';
import { APPROVAL_SECRET_VAR } from './approvals-help.js';
import { parseFlags, required, TEMPORAL_OPTIONS } from './flags.js';
import { renderTable } from './table.js';
import { clientFromFlags } from './temporal-connection.js';
import { UsageError } from './usage-error.js';

function clip(text: string, max = 60): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `chamvi approvals <workflow id>`: the run's pending approvals as a table (or JSON). */
export async function approvalsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags('approvals', args, { ...TEMPORAL_OPTIONS, json: { type: 'boolean' } }, 1);
  const workflowId = required('approvals', 'a workflow id', positionals[0], 'chamvi approvals <workflow id>');
  const { client } = await clientFromFlags('approvals', values);
  try {
    const pending = await listPendingApprovals(client, workflowId);
    if (values.json) {
      process.stdout.write(`${JSON.stringify(pending, null, 2)}\n`);
    } else if (pending.length > 0) {
      const table = renderTable(
        ['call id', 'tool', 'input', 'reason', 'requested at', 'then', 'deadline'],
        pending.map((p) => [
          p.toolCallId,
          p.toolName,
          clip(JSON.stringify(p.input) ?? ''),
          clip(p.reason ?? '-', 40),
          p.requestedAt,
          p.onTimeout,
          p.deadline,
        ]),
      );
      process.stdout.write(`pending approvals of workflow ${workflowId} (run ${pending[0]?.runId ?? ''}):\n${table}\n`);
    }
    if (pending.length === 0) {
      process.stderr.write(`chamvi: approvals: nothing of workflow "${workflowId}" is waiting for approval\n`);
      return 1;
    }
    return 0;
  } finally {
    await client.connection.close();
  }
}

/** `chamvi approve <workflow id> <call id> [--deny] [--reason …]`: decides one pending call. */
export async function approveCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    'approve',
    args,
    {
      ...TEMPORAL_OPTIONS,
      deny: { type: 'boolean' },
      reason: { type: 'string' },
      approver: { type: 'string' },
    },
    2,
  );
  const hint = 'chamvi approve <workflow id> <call id> [--deny] [--reason <text>]';
  const workflowId = required('approve', 'a workflow id', positionals[0], hint);
  const toolCallId = required('approve', 'a call id', positionals[1], hint);
  const secret = process.env[APPROVAL_SECRET_VAR];
  if (secret === undefined || secret === '') {
    throw new UsageError(
      `approve: set ${APPROVAL_SECRET_VAR} to the workers' approval secret (see chamvi approve --help)`,
    );
  }
  const { client } = await clientFromFlags('approve', values);
  try {
    const approver = values.approver ?? process.env['USER'];
    const record = await decideApproval(client, workflowId, {
      toolCallId,
      approved: values.deny !== true,
      secret,
      ...(values.reason !== undefined ? { reason: values.reason } : {}),
      ...(approver !== undefined ? { approver } : {}),
    });
    process.stdout.write(
      `${record.approved ? 'approved' : 'denied'} ${record.toolName} call ${record.toolCallId} of workflow ${workflowId}${record.reason ? ` (${record.reason})` : ''}\n`,
    );
    return 0;
  } catch (error) {
    if (ApprovalNotPendingError.isInstance(error) || ApprovalSecretMissingError.isInstance(error)) {
      process.stderr.write(`chamvi: approve: ${error.message}\n`);
      return 1;
    }
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      process.stderr.write(`chamvi: approve: refused: ${cause.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await client.connection.close();
  }
}
