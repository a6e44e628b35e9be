import { createMCPClient, type MCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ModelMessage } from 'ai';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { defineAgent, runAgent, type EffectCallReport } from '../../src/index.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import { FaultInjector, InjectedFault } from '../../testing/fault-injector.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import type { Ticket } from '../fixtures/mcp-ticket-server.js';

// The desk runs as a child process speaking MCP over stdin/stdout, started by the client as any local
// MCP tool is. Its tickets live in that process: every count below is read from the server.
const serverScript = fileURLToPath(new URL('../fixtures/mcp-stdio-ticket-server.ts', import.meta.url));
let client: MCPClient;

beforeAll(async () => {
  client = await createMCPClient({
    transport: new StdioMCPTransport({ command: process.execPath, args: ['--import', 'tsx', serverScript] }),
  });
}, 60_000);

afterAll(async () => {
  await client?.close();
});

async function ticketsTitled(title: string): Promise<Ticket[]> {
  const result = await client.callTool({ name: 'list_tickets', arguments: {} });
  const [first] = result.content as Array<{ type: string; text: string }>;
  return (JSON.parse(first?.text ?? '[]') as Ticket[]).filter((t) => t.title === title);
}

/** create_ticket as an effect tool: one ticket per run and title, found again by its title. */
function deskTools() {
  return mcpTools(client, {
    tools: {
      create_ticket: {
        effectKey: ({ title }: { title: string }, ctx) => `${ctx.run.runId}:ticket:${title}`,
        alreadyApplied: async (_key, { title }: { title: string }) => {
          const [found] = await ticketsTitled(title);
          return found === undefined ? undefined : { content: [{ type: 'text', text: JSON.stringify(found) }] };
        },
      },
    },
  });
}

describe('MCP tools over stdio', () => {
  it('a stdio server gets the same policies from its annotations as over HTTP', async () => {
    const { policies } = await deskTools();
    expect(policies).toEqual({
      list_tickets: { kind: 'plain', needsApproval: false, source: 'annotations' },
      create_ticket: { kind: 'effect', needsApproval: false, source: 'declared' },
      close_ticket: { kind: 'plain', needsApproval: false, source: 'annotations' },
      delete_ticket: { kind: 'effect', needsApproval: true, source: 'annotations' },
    });
  });

  it('a crash after the ticket is created is reconciled by the retry: the server holds exactly one ticket', async () => {
    const title = `stdio crash ${randomUUID()}`;
    const { tools } = await deskTools();
    const ctx = createToolContext({ runId: `run-${randomUUID()}`, agent: 'desk' });
    const faults = new FaultInjector({ point: 'after-effect', tool: 'create_ticket' });
    const reports: EffectCallReport[] = [];
    const wrapped = wrapToolsForRun(faults.wrapTools(tools), ctx, new MemoryEffectStore(), undefined, {
      onReport: (r) => reports.push(r),
    });
    const execute = wrapped['create_ticket']?.execute as (input: unknown, options: unknown) => Promise<unknown>;
    const create = () => execute({ title }, { toolCallId: 'call-1', messages: [] as ModelMessage[], context: ctx });

    const crash = await create().catch((e: unknown) => e);
    expect(crash).toBeInstanceOf(InjectedFault);
    expect(await ticketsTitled(title)).toHaveLength(1); // the effect happened before the crash
    await create(); // the retry
    await create(); // and once more
    expect(reports.map((r) => r.outcome)).toEqual(['reconciled', 'recorded']);
    expect(await ticketsTitled(title)).toHaveLength(1);
  });

  it('an agent run with identical create calls in one step opens one ticket over stdio', async () => {
    const title = `stdio agent ${randomUUID()}`;
    const { tools } = await deskTools();
    const create = { toolName: 'create_ticket', input: { title } };
    const agent = defineAgent({
      name: 'desk',
      model: scriptedModel([{ toolCalls: [create, create] }, { text: 'Opened.' }]),
      tools,
    });
    const result = await runAgent(agent, { prompt: 'Open a ticket', store: new MemoryEffectStore() });
    expect(result.text).toBe('Opened.');
    expect(result.effects.map((e) => e.outcome).sort()).toEqual(['executed', 'recorded']);
    expect(await ticketsTitled(title)).toHaveLength(1);
  });
});
