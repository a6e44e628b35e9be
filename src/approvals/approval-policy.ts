import type { ModelMessage, Tool, ToolExecutionOptions } from 'ai';
import type { ToolContext } from '../context/tool-context.js';

/**
 * An approval status, as AI SDK 7's `toolApproval` has it: `not-applicable` (or `undefined`) runs
 * the call, `approved` runs it without asking, `denied` refuses it without asking, and
 * `user-approval` makes the run wait for a person's decision. Object forms carry a reason (shown
 * to the approver for `user-approval`, told to the model for `denied`).
 * @public
 */
export type ApprovalStatus =
  | undefined
  | 'not-applicable'
  | 'approved'
  | 'denied'
  | 'user-approval'
  | { readonly type: 'not-applicable'; readonly reason?: never }
  | { readonly type: 'approved' | 'denied' | 'user-approval'; readonly reason?: string };

/** What a per-tool approval function gets besides the input (AI SDK 7's `SingleToolApprovalFunction` options). @public */
export interface ToolApprovalCallOptions {
  /** The tool call id of the call. */
  readonly toolCallId: string;
  /** The conversation so far, as the model step sent it to the model. */
  readonly messages: ModelMessage[];
  /** The run's ToolContext (AI SDK 7 calls it the tool context). */
  readonly toolContext: ToolContext;
}

/** One tool's approval rule: a status, or a function of the call's input and context. @public */
export type ToolApprovalRule =
  ApprovalStatus | ((input: never, options: ToolApprovalCallOptions) => ApprovalStatus | PromiseLike<ApprovalStatus>);

/**
 * AI SDK 7's `toolApproval` configuration, evaluated for every call of the agent: a rule per tool
 * name, or one function for every call.
 * @public
 */
export type ToolApprovalSettings =
  | Readonly<Record<string, ToolApprovalRule>>
  | ((call: {
      readonly toolCall: { readonly toolCallId: string; readonly toolName: string; readonly input: unknown };
      readonly messages: ModelMessage[];
      readonly toolContext: ToolContext;
    }) => ApprovalStatus | PromiseLike<ApprovalStatus>);

/** An approval status in one shape. */
export interface ResolvedApproval {
  readonly status: 'not-applicable' | 'approved' | 'denied' | 'user-approval';
  readonly reason?: string;
}

function normalize(status: ApprovalStatus | boolean): ResolvedApproval | undefined {
  if (status === undefined) return undefined;
  if (status === true) return { status: 'user-approval' };
  if (status === false) return { status: 'not-applicable' };
  if (typeof status === 'string') return { status };
  return { status: status.type, ...(status.reason !== undefined ? { reason: status.reason } : {}) };
}

/**
 * Whether a call needs a decision, and which. The agent registration's `toolApproval` decides when
 * it has a rule for the call (anything but `undefined`); otherwise the tool's own `needsApproval`
 * (`true`, or a function of the input and `{ toolCallId, messages, context }`), as on AI SDK tools.
 */
export async function resolveApproval(
  tool: Tool,
  call: { readonly toolCallId: string; readonly toolName: string; readonly input: unknown },
  ctx: ToolContext,
  messages: ModelMessage[],
  settings?: ToolApprovalSettings,
): Promise<ResolvedApproval> {
  if (settings !== undefined) {
    let status: ApprovalStatus;
    if (typeof settings === 'function') {
      status = await settings({ toolCall: call, messages, toolContext: ctx });
    } else {
      const rule = Object.hasOwn(settings, call.toolName) ? settings[call.toolName] : undefined;
      status =
        typeof rule === 'function'
          ? await (
              rule as (input: unknown, options: ToolApprovalCallOptions) => ApprovalStatus | PromiseLike<ApprovalStatus>
            )(call.input, {
              toolCallId: call.toolCallId,
              messages,
              toolContext: ctx,
            })
          : rule;
    }
    const resolved = normalize(status);
    if (resolved !== undefined) return resolved;
  }
  const needs = tool.needsApproval;
  if (needs === undefined) return { status: 'not-applicable' };
  if (typeof needs === 'boolean') return normalize(needs) ?? { status: 'not-applicable' };
  const options = {
    toolCallId: call.toolCallId,
    messages,
    context: ctx,
  } as unknown as ToolExecutionOptions<ToolContext>;
  const answer = await (
    needs as (input: unknown, options: ToolExecutionOptions<ToolContext>) => boolean | PromiseLike<boolean>
  )(call.input, options);
  return normalize(answer === true) ?? { status: 'not-applicable' };
}
