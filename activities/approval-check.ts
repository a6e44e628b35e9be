import type { ToolExecutionOptions, ToolSet } from 'ai';
import { resolveApproval } from '../src/approvals/approval-policy.js';
import { verifyApprovalToken, type ApprovalTokenVerdict } from '../src/approvals/approval-token.js';
import type { ToolContext } from '../src/context/tool-context.js';
import { isEffectTool } from '../src/effects/define-effect-tool.js';
import { inputFingerprint } from '../src/effects/effect-key.js';
import { resolveEffectKey } from '../src/effects/effect-key.js';
import { ApprovalRequiredError, EffectKeyMismatchError } from '../src/errors/errors.js';
import type { ToolCallInput } from '../common/index.js';
import { APPROVAL_SECRET_ENV } from './approval-activities.js';
import type { AgentRegistration } from './agent-registry.js';

/**
 * The activity's own check that a call needing approval was approved, before anything runs. The
 * workflow's approval gate already waited for the decision; this check does not trust it: the
 * policy is evaluated again here, and an approver's token must verify with the workers' secret
 * for this run, this call, the effect key this worker computes for the input, the fingerprint of
 * the input this activity is about to run, the nonce of the request it answered, and the decision
 * (not its expiry: the run accepted it before that). A call approved by timeout passes
 * only when the registration says `onApprovalTimeout: 'approve'`. So workflow code that skips the
 * gate (a hand-written workflow, a workflow-side tool), or hands the activity another input than
 * the one approved, cannot apply a guarded effect.
 *
 * @throws ApprovalRequiredError (non-retryable) when the approval is missing or does not hold.
 * @throws EffectKeyMismatchError (non-retryable) when the activity input's effect key is not the
 *   key of its input: the token is bound to a key, so the key is verified before the token.
 * @throws UnsupportedJsonValueError (non-retryable) when the input has no faithful canonical JSON
 *   form, so no fingerprint can bind it.
 */
export async function assertApproved(
  registration: AgentRegistration,
  tool: ToolSet[string],
  input: ToolCallInput,
  ctx: ToolContext,
  secret: string | Uint8Array | undefined,
  options: ToolExecutionOptions<ToolContext>,
): Promise<void> {
  const call = { toolCallId: input.toolCallId, toolName: input.toolName, input: input.input };
  // Read only when a rule or the tool's needsApproval may look at them: reading builds them from the store.
  const messages =
    registration.toolApproval !== undefined || typeof tool.needsApproval === 'function' ? options.messages : [];
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
  const secretKey = secret ?? process.env[APPROVAL_SECRET_ENV];
  if (evidence.decidedBy !== 'approver' || secretKey === undefined || secretKey === '') {
    throw refused(input, `an approval decided by ${evidence.decidedBy} is not accepted for this tool`);
  }
  const expected = {
    runId: input.runId,
    toolCallId: input.toolCallId,
    key: await effectKeyFor(tool, input, ctx, options),
    fingerprint: inputFingerprint(input.input),
    nonce: evidence.nonce ?? '',
    approved: true,
  };
  // Not the expiry: the run accepted the decision before it, and this call's retries may come later.
  let verdict: ApprovalTokenVerdict;
  try {
    verdict = verifyApprovalToken(secretKey, evidence.token, expected, { checkExpiry: false });
  } catch (error) {
    verdict = { valid: false, problem: error instanceof Error ? error.message : String(error) };
  }
  if (!verdict.valid) throw refused(input, verdict.problem);
}

/**
 * The key the token must name: for an effect tool, the key this worker computes for the input
 * (the one `applyEffect` will use), never the one the activity input carries; empty for a plain tool.
 */
async function effectKeyFor(
  tool: ToolSet[string],
  input: ToolCallInput,
  ctx: ToolContext,
  options: ToolExecutionOptions<ToolContext>,
): Promise<string> {
  if (!isEffectTool(tool)) return input.key ?? '';
  const key = await resolveEffectKey({
    tool,
    toolName: input.toolName,
    input: input.input,
    ctx,
    options,
  });
  if (input.key !== undefined && input.key !== key)
    throw new EffectKeyMismatchError({ toolName: input.toolName, given: input.key, computed: key });
  return key;
}

function refused(input: ToolCallInput, problem: string): ApprovalRequiredError {
  return new ApprovalRequiredError(
    `Tool call ${input.toolCallId} (${input.toolName}) needs approval, and its approval does not hold: ${problem}; nothing was applied.`,
  );
}
