import type { ToolSet } from 'ai';
import type { Agent } from '../src/agent/define-agent.js';
import type { ApprovalStatus, ToolApprovalSettings } from '../src/approvals/approval-policy.js';
import { toolsContextFor } from '../src/agent/tools-context.js';
import type { AgentRegistration } from './agent-registry.js';

type MaybePromise<T> = T | PromiseLike<T>;
/** AI SDK 7's generic `toolApproval` function, as a `ToolLoopAgent` setting has it. */
type SdkApprovalFunction = (options: {
  toolCall: unknown;
  tools: ToolSet;
  toolsContext: unknown;
  runtimeContext: unknown;
  messages: unknown[];
}) => MaybePromise<ApprovalStatus>;
/** AI SDK 7's per-tool approval function. */
type SdkToolApprovalFunction = (input: unknown, options: Record<string, unknown>) => MaybePromise<ApprovalStatus>;

/**
 * The registration with the agent's own `toolApproval` (its AI SDK setting) where the
 * registration sets none: the worker's registration wins, as a later layer of settings does.
 */
export function withAgentToolApproval(registration: AgentRegistration): AgentRegistration {
  if (registration.toolApproval !== undefined) return registration;
  const toolApproval = agentToolApproval(registration.agent);
  return toolApproval === undefined ? registration : { ...registration, toolApproval };
}

/**
 * An agent's `toolApproval` setting in the shape chamvi's approval resolution calls (the model
 * step plans approvals with it, the tool's activity checks them again): the SDK's functions get
 * what the SDK gives them, `tools`, `toolsContext` (every tool's is the run's ToolContext) and the
 * agent's `runtimeContext` besides the call and its messages.
 */
export function agentToolApproval(agent: Agent): ToolApprovalSettings | undefined {
  const given = agent.settings?.toolApproval as unknown;
  if (given === undefined || given === null) return undefined;
  const runtimeContext = agent.settings.runtimeContext ?? {};
  if (typeof given === 'function') {
    const decide = given as SdkApprovalFunction;
    return (call) =>
      decide({
        toolCall: { type: 'tool-call', ...call.toolCall },
        tools: agent.tools,
        toolsContext: toolsContextFor(agent.tools, call.toolContext),
        runtimeContext,
        messages: call.messages,
      });
  }
  const rules = Object.entries(given as Record<string, unknown>).map(([toolName, rule]) => {
    if (typeof rule !== 'function') return [toolName, rule as ApprovalStatus];
    const decide = rule as SdkToolApprovalFunction;
    return [toolName, (input: never, options: object) => decide(input, { ...options, runtimeContext })];
  });
  return Object.fromEntries(rules) as ToolApprovalSettings;
}
