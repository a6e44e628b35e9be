import type { ToolExecutionOptions, ToolSet } from 'ai';
import { subAgentsOf } from '../src/agent/agent-tool.js';
import type { Agent } from '../src/agent/define-agent.js';
import type { ToolApprovalSettings } from '../src/approvals/approval-policy.js';
import type { ToolContext } from '../src/context/tool-context.js';
import { assertNoStrayHooks, isEffectTool } from '../src/effects/define-effect-tool.js';
import { ToolNotAllowedError, UnknownAgentError, UnknownToolError } from '../src/errors/errors.js';
import { activityToolContext } from './activity-context.js';
import { withAgentToolApproval } from './agent-tool-approval.js';
import { assertApproved } from './approval-check.js';
import { callOptionsFor } from './call-conversation.js';
import { parseToolInput } from './tool-input.js';
import { ConversationLog } from '../src/conversation/conversation-log.js';
import { MemoryConversationStore } from '../src/stores/memory-conversation.js';
import type { ToolActivityOptions, ToolCallInput } from '../common/index.js';

/**
 * An agent as a worker runs it, with its Temporal settings.
 *
 * Activity options apply in this order (later wins): the library defaults, `toolDefaults`, then
 * `tools[toolName]`, field by field (`retry` too); a field left `undefined` in a layer keeps the
 * layer below. They travel to the workflow with each step's plan, so changing them needs a worker
 * restart only, not new workflow code.
 * @public
 */
export interface AgentRegistration {
  /** The agent to register (a `defineAgent` result). */
  readonly agent: Agent;
  /**
   * Re-checked on every tool call, inside the tool's activity; `false` refuses the call with a
   * non-retryable `ToolNotAllowedError` before the store or the remote is touched, and the model
   * is told.
   */
  readonly allow?: (toolName: string, ctx: ToolContext) => boolean;
  /** Activity options for every tool of this agent. */
  readonly toolDefaults?: ToolActivityOptions;
  /** Activity options per tool name. */
  readonly tools?: Readonly<Record<string, ToolActivityOptions>>;
  /**
   * AI SDK 7's `toolApproval`: per tool name a status (`'user-approval'`, `'denied'`, ...) or a
   * function of the input and `{ toolCallId, messages, toolContext }`, or one function for every
   * call. Evaluated in the model step; where it has no rule (`undefined`), the tool's own
   * `needsApproval` decides.
   */
  readonly toolApproval?: ToolApprovalSettings;
  /** How long a call waits for a decision (ms or a duration string). Default 7 days. */
  readonly approvalTimeout?: string | number;
  /** What happens when nobody decides in time. Default `'deny'`. */
  readonly onApprovalTimeout?: 'deny' | 'approve';
}

/** What a worker accepts for each agent: the agent itself, or a registration with settings. @public */
export type AgentEntry = Agent | AgentRegistration;

/** The agents a worker serves, by name. */
export class AgentRegistry {
  private readonly byName = new Map<string, AgentRegistration>();

  /** `approvalSecret`: the workers' approval secret, for the activities' own approval check. */
  constructor(
    entries: readonly AgentEntry[],
    private readonly approvalSecret?: string | Uint8Array,
    /** Where tool calls read the conversation they were made in. Default: one in this process's memory. */
    private readonly conversations: ConversationLog = new ConversationLog(new MemoryConversationStore()),
  ) {
    for (const entry of entries) {
      const registration: AgentRegistration =
        'agent' in entry && typeof entry.agent === 'object' ? entry : { agent: entry as Agent };
      const name = registration.agent.name;
      if (this.byName.has(name))
        throw new TypeError(`Agent "${name}" is registered twice on this worker; agent names must be unique.`);
      // defineAgent checked this already, unless the agent object was assembled by hand.
      for (const [toolName, tool] of Object.entries(registration.agent.tools ?? {})) {
        assertNoStrayHooks(toolName, tool, `worker: agent "${name}"`);
      }
      // The agent's own toolApproval (its AI SDK setting) applies where the registration sets none.
      this.byName.set(name, withAgentToolApproval(registration));
    }
    for (const registration of [...this.byName.values()]) this.addSubAgents(registration.agent);
  }

  /** Registers the sub-agents of `agent`'s agent tools, and theirs, unless registered already (the same agent). */
  private addSubAgents(agent: Agent): void {
    for (const [toolName, sub] of subAgentsOf(agent)) {
      const known = this.byName.get(sub.name);
      if (known !== undefined) {
        if (known.agent !== sub)
          throw new TypeError(
            `Agent "${agent.name}" has tool "${toolName}" for an agent named "${sub.name}", but a different agent of that name is registered on this worker; agent names must be unique.`,
          );
        continue;
      }
      this.byName.set(sub.name, withAgentToolApproval({ agent: sub }));
      this.addSubAgents(sub);
    }
  }

  /** @throws UnknownAgentError naming the registered agents. */
  get(name: string): AgentRegistration {
    const found = this.byName.get(name);
    if (found === undefined) throw new UnknownAgentError({ agentName: name, known: [...this.byName.keys()] });
    return found;
  }

  /** @throws UnknownToolError naming the agent's tools. */
  tool(registration: AgentRegistration, toolName: string): ToolSet[string] {
    const tools = registration.agent.tools;
    const tool = Object.hasOwn(tools, toolName) ? tools[toolName] : undefined;
    if (tool === undefined)
      throw new UnknownToolError({ toolName, agentName: registration.agent.name, known: Object.keys(tools) });
    return tool;
  }

  /**
   * The agent and tool of a tool-call activity, with the run's ToolContext, the call's AI SDK
   * options (`messages` read from the conversation log when the call's conversation comes by
   * reference) and the call's input parsed by the tool's current schema (`parseToolInput`), after
   * the agent's `allow` check, the schema and the approval check: a refused call throws
   * {@link ToolNotAllowedError} (before anything is read), the AI SDK's `InvalidToolInputError` or
   * `ApprovalRequiredError` before anything else runs. The approval check and everything after it
   * get the parsed input.
   */
  async resolveCall(input: ToolCallInput): Promise<{
    registration: AgentRegistration;
    tool: ToolSet[string];
    ctx: ToolContext;
    options: ToolExecutionOptions<ToolContext>;
    input: unknown;
  }> {
    const registration = this.get(input.agent);
    const tool = this.tool(registration, input.toolName);
    const ctx = activityToolContext(input);
    if (registration.allow !== undefined && !registration.allow(input.toolName, ctx)) {
      throw new ToolNotAllowedError(input.toolName);
    }
    // Every call the workflow schedules was planned by the model step, except effect calls from
    // workflow code (`effectToolCalls`), which come without a planned key and with a raw input.
    const planned = !isEffectTool(tool) || input.key !== undefined;
    const parsed = await parseToolInput(tool, input.toolName, input.input, planned);
    const options = await callOptionsFor(input, ctx, this.conversations);
    await assertApproved(registration, tool, { ...input, input: parsed }, ctx, this.approvalSecret, options);
    return { registration, tool, ctx, options, input: parsed };
  }

  names(): string[] {
    return [...this.byName.keys()];
  }
}
