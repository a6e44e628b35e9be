import type { Client } from '@temporalio/client';
import { inputFingerprint } from '../../src/effects/effect-key.js';
import { decideApproval, listPendingApprovals } from '../../client/approvals-client.js';
import { ApprovalAnswerRefusedError, ChatTurnConflictError } from './chat-errors.js';
import { approvalIdOf } from './run-progress-parts.js';

/** An answer `useChat` sends for a tool part (`addToolApprovalResponse`), as the page has it: nothing here is trusted. */
export interface ApprovalAnswer {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly approvalId: string;
  readonly approved: boolean;
  readonly reason?: string;
  /** The page's copy of the call's input: compared with the run's, never signed. */
  readonly input: unknown;
}

/** The answered approvals of a UI message: its tool parts in state `approval-responded`. */
export function approvalAnswersOf(message: { readonly parts?: unknown }): ApprovalAnswer[] {
  const parts = Array.isArray(message.parts) ? (message.parts as unknown[]) : [];
  const out: ApprovalAnswer[] = [];
  for (const part of parts) {
    if (typeof part !== 'object' || part === null) continue;
    const p = part as Record<string, unknown>;
    if (p.state !== 'approval-responded' || typeof p.toolCallId !== 'string') continue;
    const approval = p.approval as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
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
 * run `workflowId` waits for: the approval id names this workflow and call, the call is waiting,
 * the tool is the call's, and the page's input has the call's input fingerprint. Only then is any
 * decision sent, each through `decideApproval` (a token for the run's own copy of the request:
 * run, call, effect key, fingerprint, nonce and the decision).
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
  const pending = await listPendingApprovals(client, workflowId);
  for (const answer of answers) {
    const call = pending.find((p) => p.toolCallId === answer.toolCallId);
    if (answer.approvalId !== approvalIdOf(workflowId, answer.toolCallId)) {
      throw new ApprovalAnswerRefusedError(
        `The approval answer ${JSON.stringify(answer.approvalId).slice(0, 120)} does not name call ${answer.toolCallId} of workflow ${workflowId}; nothing was decided. Answer the approval request this chat's stream sent.`,
      );
    }
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
    const expected = call.fingerprint !== '' ? call.fingerprint : inputFingerprint(call.input);
    if (inputFingerprint(answer.input) !== expected) {
      throw new ApprovalAnswerRefusedError(
        `The page's input for call ${answer.toolCallId} (${call.toolName}) of workflow ${workflowId} is not the input the call was planned with (fingerprint ${expected.slice(0, 12)}…); nothing was decided. Reload the chat and decide on the input the run shows.`,
      );
    }
  }
  for (const answer of answers) {
    await decideApproval(client, workflowId, {
      toolCallId: answer.toolCallId,
      approved: answer.approved,
      ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      ...(options.approver !== undefined ? { approver: options.approver } : {}),
      ...(options.secret !== undefined ? { secret: options.secret } : {}),
    });
  }
}
