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

/** How long `chamvi approve` waits for the run's verdict by default, in seconds: past the verification activity's 1-minute budget. */
export const DEFAULT_APPROVE_TIMEOUT_S = 90;

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
      // A sub-agent's call is decided with its own run's workflow id: the column says which.
      const nested = pending.some((p) => p.workflowId !== undefined);
      const table = renderTable(
        [...(nested ? ['workflow'] : []), 'call id', 'tool', 'input', 'reason', 'requested at', 'then', 'deadline'],
        pending.map((p) => [
          ...(nested ? [p.workflowId ?? '(this run)'] : []),
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
      timeout: { type: 'string' },
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
  const timeoutS = timeoutSeconds(values.timeout);
  const { client } = await clientFromFlags('approve', values);
  // The deadline covers the pending-approvals query and the update: both wait for a worker of the run.
  const deadline = AbortSignal.timeout(timeoutS * 1000);
  let stage: 'query' | 'update' = 'query';
  try {
    const approver = values.approver ?? process.env['USER'];
    const record = await client.withAbortSignal(deadline, async () => {
      await listPendingApprovals(client, workflowId);
      stage = 'update';
      return decideApproval(client, workflowId, {
        toolCallId,
        approved: values.deny !== true,
        secret,
        ...(values.reason !== undefined ? { reason: values.reason } : {}),
        ...(approver !== undefined ? { approver } : {}),
      });
    });
    process.stdout.write(
      `${record.approved ? 'approved' : 'denied'} ${record.toolName} call ${record.toolCallId} of workflow ${workflowId}${record.reason ? ` (${record.reason})` : ''}\n`,
    );
    return 0;
  } catch (error) {
    if (deadline.aborted) {
      process.stderr.write(`chamvi: approve: ${noVerdict(workflowId, toolCallId, timeoutS, stage)}\n`);
      return 1;
    }
    if (stage === 'query') {
      // Not a refusal: the run was not asked yet (not found, no worker polling, a connection error).
      const said = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
      process.stderr.write(
        `chamvi: approve: the pending approvals query of workflow ${workflowId} failed (${said}); nothing was sent\n`,
      );
      return 1;
    }
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

/** `--timeout <seconds>`: a positive number of seconds, default {@link DEFAULT_APPROVE_TIMEOUT_S}. */
function timeoutSeconds(flag: string | undefined): number {
  if (flag === undefined) return DEFAULT_APPROVE_TIMEOUT_S;
  const seconds = Number(flag);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) {
    throw new UsageError(
      `approve: --timeout must be a number of seconds in (0, 86400], got "${flag}" (see chamvi approve --help)`,
    );
  }
  return seconds;
}

/** What to tell when no verdict came in time: which part did not answer, and what to check. */
function noVerdict(workflowId: string, toolCallId: string, seconds: number, stage: 'query' | 'update'): string {
  const check = `check that a worker is running on the run's task queue (with the same ${APPROVAL_SECRET_VAR}) and read its log`;
  return stage === 'query'
    ? `no answer from workflow ${workflowId} within ${seconds} s: its pending approvals query was not answered, so no worker of the run is polling; nothing was sent. ${check}, then run chamvi approve again.`
    : `no verdict on call ${toolCallId} of workflow ${workflowId} within ${seconds} s: the decision was sent, and the run's verification of it (activity chamvi.verifyApproval) has not answered. ${check}; chamvi approvals ${workflowId} shows whether the call still waits (a decision the run has not accepted yet can be sent again).`;
}
