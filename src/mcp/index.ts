// `@chamvi/temporal/mcp`: an MCP server's tools as agent tools (effect tools or plain tools, from
// their annotations or your declarations). It takes an `@ai-sdk/mcp` client and loads nothing of it.
export {
  mcpTools,
  type McpToolAnnotations,
  type McpToolDeclaration,
  type McpToolDefinition,
  type McpToolPolicy,
  type McpTools,
  type McpToolSource,
  type McpToolsOptions,
} from './mcp-tools.js';

// Types of the root entry point that the declarations take, re-exported as types (the same declarations).
export type { EffectCallInfo, RunData, RunInfo, ToolContext } from '../context/tool-context.js';
