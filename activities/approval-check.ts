import type { ModelMessage, ToolSet } from 'ai';
import { resolveApproval } from '../src/approvals/approval-policy.js';
import { verifyApprovalToken } from '../src/approvals/approval-token.js';
import type { ToolContext } from '../src/context/tool-context.js';
import { ApprovalRequiredError } from '../src/errors/errors.js';
import type { ToolCallInput } from '../workflows/types.js';
import { APPROVAL_SECRET_ENV } from './approval-activities.js';
import type { AgentRegistration } from './agent-registry.js';

/**
 * The activity's own check that a call needing approval was approved, before anything runs. The
 * workflow's approval gate already waited for the decision; this check does not trust it: the
 * policy is evaluated again here, and an approver's token must verify for this run, this call and
 * its effect key with the workers' secret. A call approved by timeout passes only when the
 * registration says `onApprovalTimeout: 'approve'`. So workflow code that skips the gate (a
 * hand-written workflow, a workflow-side tool) cannot apply a guarded effect.
 *
 * @throws ApprovalRequiredError (non-retryable) when the approval is missing or does not hold.
 */
export async function assertApproved(
  registration: AgentRegistration,
  tool: ToolSet[string],
  input: ToolCallInput,
  ctx: ToolContext,
  secret: string | Uint8Array | undefined,
): Promise<void> {
  const call = { toolCallId: input.toolCallId, toolName: input.toolName, input: input.input };
  const messages = input.messages as unknown as ModelMessage[];
  const required = await resolveApproval(tool, call, ctx, messages, registration.toolApproval);
  if (required.status === 'denied') {
    throw new ApprovalRequiredError(
      `Tool call ${input.toolCallId} (${input.toolName}) is denied by the approval policy${required.reason ? `: ${required.reason}` : ''}; nothing was applied.`,
    );
  }
  if (required.status !== 'user-approval') return;
  const evidence = input.approval;
  if (evidence?.approved !== true) {
    throw new ApprovalRequiredError(
      `Tool call ${input.toolCallId} (${input.toolName}) needs approval and reached its activity without one; nothing was applied. Run it through the agent workflow (its approval gate) or approve it first.`,
    );
  }
  if (evidence.decidedBy === 'timeout' && registration.onApprovalTimeout === 'approve') return;
  const key = secret ?? process.env[APPROVAL_SECRET_ENV];
  const verdict =
    evidence.decidedBy === 'approver' && key !== undefined && key !== ''
      ? verifyApprovalToken(key, evidence.token, {
          runId: input.runId,
          toolCallId: input.toolCallId,
          key: input.key ?? '',
          approved: true,
        })
      : {
          valid: false as const,
          problem: `an approval decided by ${evidence.decidedBy} is not accepted for this tool`,
        };
  if (!verdict.valid) {
    throw new ApprovalRequiredError(
      `Tool call ${input.toolCallId} (${input.toolName}) needs approval, and its approval does not hold: ${verdict.problem}; nothing was applied.`,
    );
  }
}
