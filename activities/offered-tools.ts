import { asSchema, type ToolSet } from 'ai';

const offeredBy = new WeakMap<ToolSet, ToolSet>();

/**
 * The agent's tools as a model step offers them to the model: without `execute` (the workflow runs
 * the calls) and without `needsApproval` (the workflow asks), each input schema turned into the AI
 * SDK's `Schema` once per tool set. The AI SDK converts a schema to JSON Schema when it first reads
 * it and keeps the result on that `Schema`, so every step of every run of the agent reuses one
 * conversion instead of converting the zod schema again; validation is the schema's own, as before.
 */
export function offeredTools(tools: ToolSet): ToolSet {
  let offered = offeredBy.get(tools);
  if (offered === undefined) {
    offered = {};
    for (const [name, tool] of Object.entries(tools)) {
      offered[name] = {
        ...tool,
        inputSchema: asSchema(tool.inputSchema),
        execute: undefined,
        needsApproval: undefined,
      };
    }
    offeredBy.set(tools, offered);
  }
  return offered;
}
