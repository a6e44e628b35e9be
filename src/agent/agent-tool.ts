import { tool, type FlexibleSchema, type Tool } from 'ai';
import { z } from 'zod';
import { inputFingerprint } from '../effects/effect-key.js';
import { AgentToolOutsideRunError } from '../errors/errors.js';
import { isAgent, type Agent } from './define-agent.js';

const AGENT_TOOL = Symbol.for('@chamvi/temporal/agent-tool');

/**
 * What {@link defineAgentTool} takes besides the agent. `INPUT` is the call's input; without an
 * `inputSchema` it is `{ prompt: string }`, the task in words.
 * @beta
 */
export interface AgentToolOptions<INPUT = { readonly prompt: string }> {
  /** What the calling agent's model reads to decide when to delegate. Default: `Delegates a task to the "<name>" agent.` */
  readonly description?: string;
  /** The call's input schema. Default: `{ prompt: string }`. */
  readonly inputSchema?: FlexibleSchema<INPUT>;
  /**
   * The sub-agent run's prompt, from the call's (validated) input. Default: `input.prompt`, which
   * the default schema has. Runs where the call is planned (the model step), so it must be a pure
   * function of the input: the child's identity is derived from the input, not from the prompt.
   */
  readonly prompt?: (input: INPUT) => string;
}

/** What the engines read from an agent tool. */
export interface AgentToolSpec {
  readonly agent: Agent;
  readonly prompt: (input: unknown) => string;
}

/**
 * An agent as a tool of another agent: a call runs `agent` as a sub-agent with a prompt made from
 * the call's input, and the calling model gets the sub-agent's final text as the tool's result.
 *
 * Under Temporal each call is a child workflow (`agentWorkflow`, on the parent's task queue) with
 * its own history, model steps and effect calls. Its workflow id is
 * `<parent workflow id>:<tool>:<step>:<input hash>` and its run id (`ctx.run.runId`, the prefix of
 * its default effect keys) `<parent run id>:<tool>:<step>:<input hash>`: both derived from the
 * parent's run and the call (the tool, the parent's step, the first 16 hex digits of the input's
 * SHA-256), so a retried, reset or continued parent gets the same child for the same call, and the
 * child's effects apply at most once per key as a top-level run's do. Two calls of the same step
 * with the same input are one child. Cancelling the parent cancels its running children and waits
 * for them to end (a child with `compensateOn: ['cancel']` undoes its effects first); a parent that
 * is terminated or times out terminates them (Temporal's parent-close policy `TERMINATE`). A child
 * that fails is a tool error for the parent's model, by the failure catalogue (a failure whose
 * entry says `run` fails the parent). The worker registers the sub-agent with the agent that uses it.
 *
 * With `runAgent` the sub-agent runs in the same process, on the same effect store, with the same
 * derived run id. Called any other way (`generateText` with the tool), `execute` throws
 * {@link AgentToolOutsideRunError}.
 * @beta
 */
export function defineAgentTool<INPUT = { readonly prompt: string }>(
  agent: Agent,
  options: AgentToolOptions<INPUT> = {},
): Tool<INPUT, string> {
  if (!isAgent(agent)) {
    throw new TypeError('defineAgentTool: the first argument must be an agent made by defineAgent().');
  }
  if (options.inputSchema !== undefined && options.prompt === undefined) {
    throw new TypeError(
      `defineAgentTool("${agent.name}"): with an inputSchema of your own, give prompt(input) too: it builds the sub-agent's prompt from the input.`,
    );
  }
  const prompt = (options.prompt ?? ((input: INPUT) => (input as { prompt: string }).prompt)) as (i: unknown) => string;
  const spec: AgentToolSpec = { agent, prompt };
  const defined = tool({
    description: options.description ?? `Delegates a task to the "${agent.name}" agent.`,
    inputSchema: (options.inputSchema ??
      z.object({ prompt: z.string().describe(`The task for the "${agent.name}" agent.`) })) as FlexibleSchema<INPUT>,
    execute: (): string => {
      throw new AgentToolOutsideRunError(agent.name);
    },
  });
  // An own enumerable symbol: a spread copy (`{ ...tool, description }`) is still the agent tool.
  return Object.assign(defined, { [AGENT_TOOL]: spec });
}

/** The sub-agent of an agent tool, or `undefined` for any other tool. */
export function agentToolOf(value: unknown): AgentToolSpec | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as { [AGENT_TOOL]?: AgentToolSpec })[AGENT_TOOL];
}

/**
 * The sub-agent prompt of a call, checked: a non-empty string.
 * @throws TypeError naming the tool, when `prompt` throws or returns something else.
 */
export function agentToolPrompt(toolName: string, spec: AgentToolSpec, input: unknown): string {
  const prompt = spec.prompt(input);
  if (typeof prompt !== 'string' || prompt === '') {
    throw new TypeError(
      `Agent tool "${toolName}": prompt(input) must return a non-empty string (got ${JSON.stringify(prompt)}).`,
    );
  }
  return prompt;
}

/**
 * What tells a call's sub-agent run apart within its parent run: `<tool>:<step>:<16 hex digits of
 * the input's SHA-256>`. The child's run id is `<parent run id>:<this>`, its workflow id
 * `<parent workflow id>:<this>`.
 */
export function childCallId(toolName: string, step: number, input: unknown): string {
  return `${toolName}:${step}:${inputFingerprint(input).slice(0, 16)}`;
}

/** The sub-agents of `agent`'s agent tools, by tool name. */
export function subAgentsOf(agent: Agent): Array<[toolName: string, subAgent: Agent]> {
  const found: Array<[string, Agent]> = [];
  for (const [toolName, tool] of Object.entries(agent.tools)) {
    const spec = agentToolOf(tool);
    if (spec !== undefined) found.push([toolName, spec.agent]);
  }
  return found;
}
