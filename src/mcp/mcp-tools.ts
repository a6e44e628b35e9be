import type { Tool, ToolExecutionOptions, ToolSet } from 'ai';
import type { ToolContext } from '../context/tool-context.js';
import { defineEffectTool } from '../effects/define-effect-tool.js';

/** An MCP tool's behaviour hints (`annotations` in `tools/list`). Untrusted unless the server is. @beta @experimental */
export interface McpToolAnnotations {
  /** A human-readable title of the tool. */
  readonly title?: string;
  /** The tool changes nothing (a read-only tool is a plain, retryable tool). */
  readonly readOnlyHint?: boolean;
  /** The tool may destroy or overwrite (a destructive effect tool needs approval). */
  readonly destructiveHint?: boolean;
  /** Calling it again with the same input changes nothing more. */
  readonly idempotentHint?: boolean;
  /** The tool reaches outside systems (the web, other services). */
  readonly openWorldHint?: boolean;
}

/** A tool definition as an MCP server lists it (the fields used here). @beta @experimental */
export interface McpToolDefinition {
  /** The tool's name on the server. */
  readonly name: string;
  /** The server's behaviour hints for the tool. */
  readonly annotations?: McpToolAnnotations;
  /** The definition's other fields (`description`, `inputSchema`, ...), handed on as they are. */
  readonly [field: string]: unknown;
}

/** The two things this module needs from an `@ai-sdk/mcp` client (`createMCPClient`). @beta @experimental */
export interface McpToolSource {
  /** One page of the server's tools (`tools/list`). */
  listTools(options?: { params?: { cursor?: string } }): Promise<{ tools: McpToolDefinition[]; nextCursor?: string }>;
  /** The AI SDK tools for those definitions, calling the server. */
  toolsFromDefinitions(definitions: { tools: McpToolDefinition[] }): Record<string, unknown>;
}

/** How a tool runs in an agent workflow, picked from its annotations unless declared. @beta @experimental */
export interface McpToolPolicy {
  /** `effect`: the effect protocol, at most once per effect key; `plain`: an ordinary activity, retried freely. */
  readonly kind: 'effect' | 'plain';
  /** Whether calls wait for a person's decision (`needsApproval: true`). */
  readonly needsApproval: boolean;
  /** Where the choice came from. */
  readonly source: 'annotations' | 'declared';
}

/**
 * What a user declares for one MCP tool (anything left out comes from the annotations). The hooks
 * are method signatures, so a declaration written for the tool's own input type (`{ title }`)
 * fits a map of declarations for different tools.
 * @beta @experimental
 */
export interface McpToolDeclaration<INPUT = Record<string, unknown>, OUTPUT = unknown> {
  /** Run it as an effect tool (`effect`) or as a plain tool (`plain`). */
  readonly kind?: 'effect' | 'plain';
  /** The effect key (effect tools); default `<runId>:<tool name>:<sha256 of the input>`. */
  effectKey?(
    this: void,
    input: INPUT,
    ctx: ToolContext,
    options: ToolExecutionOptions<ToolContext>,
  ): string | PromiseLike<string>;
  /** Finds an effect an earlier, crashed attempt applied (effect tools). */
  alreadyApplied?(
    this: void,
    key: string,
    input: INPUT,
    ctx: ToolContext,
  ): OUTPUT | undefined | PromiseLike<OUTPUT | undefined>;
  /** `true`, `false`, or per call a function of input and `{ toolCallId, messages, context }`. */
  readonly needsApproval?:
    boolean | ((input: INPUT, options: ToolExecutionOptions<ToolContext>) => boolean | PromiseLike<boolean>);
}

/** What {@link mcpTools} takes. @beta @experimental */
export interface McpToolsOptions {
  /** Declarations per MCP tool name (effect key, reconciliation, kind, approval). */
  readonly tools?: Readonly<Record<string, McpToolDeclaration>>;
  /** Only these tools (default: every tool the server lists). */
  readonly include?: readonly string[];
  /** Prefix for the tool names the model sees (e.g. `tickets_`), to keep servers apart. */
  readonly prefix?: string;
}

/**
 * The safe default for an MCP tool from its annotations (MCP's own defaults when absent:
 * not read-only, destructive, not idempotent):
 *
 * - read-only: a plain tool (reads are safe to retry), no approval;
 * - idempotent: a plain tool (repeating it changes nothing more); approval if destructive;
 * - otherwise: an effect tool (applied at most once per effect key); approval if destructive.
 */
export function mcpToolPolicy(annotations: McpToolAnnotations | undefined): McpToolPolicy {
  const readOnly = annotations?.readOnlyHint === true;
  const destructive = !readOnly && annotations?.destructiveHint !== false;
  const idempotent = readOnly || annotations?.idempotentHint === true;
  return { kind: idempotent ? 'plain' : 'effect', needsApproval: destructive, source: 'annotations' };
}

/** An MCP server's tools as agent tools, with the policy each one got. @beta @experimental */
export interface McpTools {
  /** The agent tools, by name: plain tools and effect tools. */
  readonly tools: ToolSet;
  /** The policy each tool got, by name (from its annotations and the options). */
  readonly policies: Readonly<Record<string, McpToolPolicy>>;
}

/**
 * Turns the tools of an MCP server (an `@ai-sdk/mcp` client) into agent tools: effect tools where
 * a call changes the world and is not idempotent, plain tools where retrying is safe, and
 * `needsApproval` on destructive ones, from the tools' annotations unless declared otherwise.
 * Call it in the worker process (the client and its connection live there); the tools' `execute`
 * calls the server from the tool activities.
 *
 * ```ts
 * const client = await createMCPClient({ transport: { type: 'http', url } });
 * const { tools } = await mcpTools(client, {
 *   tools: { create_ticket: { effectKey: ({ title }, ctx) => `${ctx.run.runId}:ticket:${title}` } },
 * });
 * const agent = defineAgent({ name: 'ops', model, tools });
 * ```
 * @beta @experimental
 */
export async function mcpTools(client: McpToolSource, options: McpToolsOptions = {}): Promise<McpTools> {
  const definitions: McpToolDefinition[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { params: { cursor } });
    definitions.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const wanted =
    options.include === undefined ? definitions : definitions.filter((d) => options.include?.includes(d.name));
  for (const name of Object.keys(options.tools ?? {})) {
    if (!definitions.some((d) => d.name === name)) {
      throw new TypeError(
        `mcpTools: the server has no tool "${name}" (it lists ${definitions.map((d) => d.name).join(', ') || 'none'}).`,
      );
    }
  }
  const converted = client.toolsFromDefinitions({ tools: wanted });
  const tools: ToolSet = {};
  const policies: Record<string, McpToolPolicy> = {};
  for (const definition of wanted) {
    const base = converted[definition.name] as Tool | undefined;
    if (base === undefined) continue;
    const declared = options.tools?.[definition.name];
    const defaults = mcpToolPolicy(definition.annotations);
    const kind =
      declared?.kind ??
      (declared?.effectKey !== undefined || declared?.alreadyApplied !== undefined ? 'effect' : defaults.kind);
    const needsApproval = declared?.needsApproval ?? defaults.needsApproval;
    const name = `${options.prefix ?? ''}${definition.name}`;
    policies[name] = {
      kind,
      needsApproval: needsApproval !== false,
      source: declared === undefined ? 'annotations' : 'declared',
    };
    const withApproval = { ...base, needsApproval } as Tool;
    tools[name] =
      kind === 'plain'
        ? withApproval
        : (defineEffectTool({
            ...(withApproval as Tool<unknown, unknown, ToolContext> & { execute: NonNullable<Tool['execute']> }),
            ...(declared?.effectKey !== undefined ? { effectKey: declared.effectKey as never } : {}),
            ...(declared?.alreadyApplied !== undefined ? { alreadyApplied: declared.alreadyApplied as never } : {}),
          }) as ToolSet[string]);
  }
  return { tools, policies };
}
