import type { Client } from '@temporalio/client';
import { inputFingerprint } from '../../src/effects/effect-key.js';
import { decidePending, listPendingApprovals } from '../../client/approvals-client.js';
import { ApprovalAnswerRefusedError, ChatTurnConflictError } from './chat-errors.js';
import { approvalIdOf } from './run-progress-parts.js';
import { subAgentApprovals, type SubAgentPending } from '../../client/sub-agent-approvals.js';
import type { PendingApproval } from '../../common/index.js';
import type { SubAgentApprovalDescriptor } from './sub-agent-view.js';

/** An answer `useChat` sends for a tool part (`addToolApprovalResponse`), as the page has it: nothing here is trusted. */
export interface ApprovalAnswer {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly approvalId: string;
  readonly approved: boolean;
  readonly reason?: string;
  /** The page's copy of the call's input: compared with the run's, never signed. */
  readonly input: unknown;
  /** The page's copy of the request's `approvalDescriptor` (a sub-agent's call: its input is compared with the run's). */
  readonly descriptor?: unknown;
}

/** The answered approvals of a UI message: its tool parts in state `approval-responded`. */
export function approvalAnswersOf(message: { readonly parts?: unknown }): ApprovalAnswer[] {
  const parts = Array.isArray(message.parts) ? (message.parts as unknown[]) : [];
  const out: ApprovalAnswer[] = [];
  for (const part of parts) {
    if (typeof part !== 'object' || part === null) continue;
    const p = part as Record<string, unknown>;
    if (p.state !== 'approval-responded' || typeof p.toolCallId !== 'string') continue;
    const approval = p.approval as
      { id?: unknown; approved?: unknown; reason?: unknown; descriptor?: unknown } | undefined;
    if (typeof approval?.id !== 'string' || typeof approval.approved !== 'boolean') continue;
    const type = typeof p.type === 'string' ? p.type : '';
    const toolName = type === 'dynamic-tool' ? String(p.toolName) : type.replace(/^tool-/, '');
    out.push({
      toolCallId: p.toolCallId,
      toolName,
      approvalId: approval.id,
      approved: approval.approved,
      ...(typeof approval.reason === 'string' ? { reason: approval.reason } : {}),
      input: p.input,
      ...(approval.descriptor !== undefined ? { descriptor: approval.descriptor } : {}),
    });
  }
  return out;
}

/** How {@link decideApprovalAnswers} signs and records the decisions. */
export interface DecideAnswersOptions {
  /** The workers' approval secret. Default: `CHAMVI_APPROVAL_SECRET`. */
  readonly secret?: string | Uint8Array;
  /** Who decides, for the run's record. */
  readonly approver?: string;
}

/**
 * Decides the durable approvals the page answered, after checking every answer against the call
 * it names, waiting in run `workflowId` or in a sub-agent run of its tree. A call of the run: the
 * approval id names this workflow and call, the call is waiting, the tool is the call's, and the
 * page's input has the call's input fingerprint. A sub-agent's call (shown on the agent tool part
 * of the run's call whose sub-agent tree holds it, see `SubAgentApprovalDescriptor`): the approval
 * id names a call waiting in that tree, the part is that agent tool call, and the page's copy of
 * the descriptor's input has the call's input fingerprint (answers with one approval id, on the
 * parts of calls sharing one sub-agent run, are one decision and must agree). Only then is any decision sent, each
 * through `decideApproval` (a token for the run's own copy of the request: run, call, effect key,
 * fingerprint, nonce and the decision).
 *
 * @throws ApprovalAnswerRefusedError when an answer does not match its call; nothing is decided.
 * @throws ChatTurnConflictError when a call answered is not waiting (decided already, or never asked).
 */
export async function decideApprovalAnswers(
  client: Client,
  workflowId: string,
  answers: readonly ApprovalAnswer[],
  options: DecideAnswersOptions = {},
): Promise<void> {
  const own = (answer: ApprovalAnswer) => answer.approvalId === approvalIdOf(workflowId, answer.toolCallId);
  const pending = await listPendingApprovals(client, workflowId, { subAgents: false });
  const tree = answers.every(own) ? [] : await subAgentApprovals(client, workflowId);
  // addToolApprovalResponse answers every part with the approval id (calls sharing a sub-agent run): one decision each.
  const groups = new Map<string, ApprovalAnswer[]>();
  for (const answer of answers) groups.set(answer.approvalId, [...(groups.get(answer.approvalId) ?? []), answer]);
  const decisions = [...groups.values()].map((group) => {
    const [first] = group as [ApprovalAnswer, ...ApprovalAnswer[]];
    if (group.some((a) => a.approved !== first.approved)) {
      throw new ApprovalAnswerRefusedError(
        `The page answers approval ${JSON.stringify(first.approvalId).slice(0, 120)} both ways (on calls ${group.map((a) => a.toolCallId).join(', ')}); nothing was decided.`,
      );
    }
    const decision = own(first) ? ownCall(workflowId, first, pending) : subAgentCall(workflowId, group, tree);
    return { ...decision, answer: first };
  });
  // Each token is minted for the request checked here: one planned again meanwhile refuses it.
  for (const { call, run, answer } of decisions) {
    await decidePending(client, run, call, {
      toolCallId: call.toolCallId,
      approved: answer.approved,
      ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      ...(options.approver !== undefined ? { approver: options.approver } : {}),
      ...(options.secret !== undefined ? { secret: options.secret } : {}),
    });
  }
}

/** The request a decision is for, as checked, and the workflow id of its run. */
type Decision = { call: PendingApproval; run: string };

function ownCall(workflowId: string, answer: ApprovalAnswer, pending: readonly PendingApproval[]): Decision {
  const call = pending.find((p) => p.toolCallId === answer.toolCallId);
  if (call === undefined) {
    const waiting = pending.map((p) => p.toolCallId).join(', ');
    throw new ChatTurnConflictError(
      `Tool call ${answer.toolCallId} of workflow ${workflowId} is not waiting for approval${waiting ? ` (waiting: ${waiting})` : ''}; nothing was decided. Reload the chat: it was decided already, or never asked.`,
    );
  }
  if (answer.toolName !== call.toolName) {
    throw new ApprovalAnswerRefusedError(
      `The approval answer for call ${answer.toolCallId} of workflow ${workflowId} names tool ${answer.toolName}, the call is ${call.toolName}; nothing was decided.`,
    );
  }
  if (!sameInput(answer.input, call)) {
    throw new ApprovalAnswerRefusedError(
      `The page's input for call ${answer.toolCallId} (${call.toolName}) of workflow ${workflowId} is not the input the call was planned with (fingerprint ${fingerprintOf(call).slice(0, 12)}…); nothing was decided. Reload the chat and decide on the input the run shows.`,
    );
  }
  return { call, run: workflowId };
}

function subAgentCall(
  workflowId: string,
  group: readonly ApprovalAnswer[],
  tree: readonly SubAgentPending[],
): Decision {
  const approvalId = group[0]?.approvalId ?? '';
  const entry = tree.find((e) => approvalIdOf(e.pending.workflowId, e.pending.toolCallId) === approvalId);
  const named = JSON.stringify(approvalId).slice(0, 120);
  const calls = group.map((a) => a.toolCallId).join(', ');
  if (entry === undefined) {
    if (!approvalId.startsWith(`${workflowId}:`)) {
      throw new ApprovalAnswerRefusedError(
        `The approval answer ${named} does not name call ${calls} of workflow ${workflowId} nor a call of its sub-agent runs; nothing was decided. Answer the approval request this chat's stream sent.`,
      );
    }
    const waiting = tree.map((e) => approvalIdOf(e.pending.workflowId, e.pending.toolCallId)).join(', ');
    throw new ChatTurnConflictError(
      `The sub-agent call of approval ${named} is not waiting for approval${waiting ? ` (waiting: ${waiting})` : ''}; nothing was decided. Reload the chat: it was decided already, or its sub-agent run ended.`,
    );
  }
  const { pending, via } = entry;
  // The part of the call that started the sub-agent run; others with the same approval id are calls sharing that run.
  const answer = group.find((a) => a.toolCallId === via.toolCallId);
  if (answer === undefined || group.some((a) => a.toolName !== via.toolName)) {
    throw new ApprovalAnswerRefusedError(
      `The approval answer ${named} is on call ${calls} (${group.map((a) => a.toolName).join(', ')}); the sub-agent call waits under call ${via.toolCallId} (${via.toolName}) of workflow ${workflowId}; nothing was decided.`,
    );
  }
  const shown = answer.descriptor as Partial<SubAgentApprovalDescriptor> | undefined;
  const same =
    typeof shown === 'object' &&
    shown !== null &&
    'input' in shown &&
    sameInput(shown.input, pending) &&
    shown.toolCallId === pending.toolCallId &&
    shown.toolName === pending.toolName &&
    shown.subAgent?.workflowId === pending.workflowId;
  if (!same) {
    throw new ApprovalAnswerRefusedError(
      `The page's approval descriptor for call ${pending.toolCallId} (${pending.toolName}) of sub-agent run ${pending.workflowId} does not name that call with the input it was planned with (fingerprint ${fingerprintOf(pending).slice(0, 12)}…); nothing was decided. Reload the chat and decide on the input the run shows.`,
    );
  }
  return { call: pending, run: pending.workflowId };
}

function fingerprintOf(call: PendingApproval): string {
  return call.fingerprint !== '' ? call.fingerprint : inputFingerprint(call.input);
}

function sameInput(input: unknown, call: PendingApproval): boolean {
  return inputFingerprint(input) === fingerprintOf(call);
}
