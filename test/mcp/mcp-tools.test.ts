import { createMCPClient, type MCPClient } from '@ai-sdk/mcp';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { defineAgent } from '../../src/index.js';
import { isEffectTool } from '../../src/effects/define-effect-tool.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { mcpToolPolicy, mcpTools } from '../../src/mcp/mcp-tools.js';
import { FaultInjector } from '../../testing/fault-injector.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { decideApproval, listPendingApprovals } from '../../client/approvals-client.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { McpTicketServer, type Ticket } from '../fixtures/mcp-ticket-server.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

const SECRET = 'mcp-test-approval-secret-0123456789';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
let desk: McpTicketServer;
let client: MCPClient;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  desk = await new McpTicketServer().start();
  client = await createMCPClient({ transport: { type: 'http', url: desk.url } });
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await client?.close();
  await desk?.stop();
  await env?.teardown();
});

/** The desk's tickets, read through the MCP tool (what alreadyApplied uses to find a crashed attempt's ticket). */
async function ticketsOnDesk(): Promise<Ticket[]> {
  const result = await client.callTool({ name: 'list_tickets', arguments: {} });
  const [first] = result.content as Array<{ type: string; text: string }>;
  return JSON.parse(first?.text ?? '[]') as Ticket[];
}

describe('MCP tools as effect tools', () => {
  it('annotations pick safe defaults: read-only and idempotent tools are plain, the rest effect tools, destructive ones need approval', async () => {
    expect(mcpToolPolicy({ readOnlyHint: true })).toMatchObject({ kind: 'plain', needsApproval: false });
    expect(mcpToolPolicy(undefined)).toMatchObject({ kind: 'effect', needsApproval: true }); // MCP's defaults: destructive, not idempotent
    const { tools, policies } = await mcpTools(client);
    expect(policies).toEqual({
      list_tickets: { kind: 'plain', needsApproval: false, source: 'annotations' },
      create_ticket: { kind: 'effect', needsApproval: false, source: 'annotations' },
      close_ticket: { kind: 'plain', needsApproval: false, source: 'annotations' },
      delete_ticket: { kind: 'effect', needsApproval: true, source: 'annotations' },
    });
    expect(isEffectTool(tools['create_ticket'])).toBe(true);
    expect(isEffectTool(tools['list_tickets'])).toBe(false);
    expect(tools['delete_ticket']?.needsApproval).toBe(true);
    await expect(mcpTools(client, { tools: { no_such_tool: {} } })).rejects.toThrow(/no tool "no_such_tool"/);
  });

  it('an agent runs MCP tools as activities: a crash after create reconciles, a repeat is recorded, delete waits for approval; each effect reaches the server once', async () => {
    const title = `printer on fire ${randomUUID()}`;
    const { tools } = await mcpTools(client, {
      tools: {
        create_ticket: {
          // one ticket per run and title, whatever else the model says
          effectKey: ({ title: t }: { title: string }, ctx) => `${ctx.run.runId}:ticket:${t}`,
          alreadyApplied: async (_key, { title: t }: { title: string }) => {
            const found = (await ticketsOnDesk()).find((ticket) => ticket.title === t);
            return found === undefined ? undefined : { content: [{ type: 'text', text: JSON.stringify(found) }] };
          },
        },
      },
    });
    const create = { toolName: 'create_ticket', input: { title } };
    const agent = defineAgent({
      name: 'desk',
      model: scriptedModel([
        { toolCalls: [create, create, { toolName: 'list_tickets', input: {} }] },
        { toolCalls: [{ toolName: 'delete_ticket', input: { title: 'stale' } }] },
        { toolCalls: [create] },
        { text: 'Done.' },
      ]),
      tools,
    });
    const before = { ...desk.calls };
    // The first create attempt dies after the server made the ticket, before the result is recorded.
    let crashed = 0;
    const faults = new FaultInjector({
      point: 'after-effect',
      tool: 'create_ticket',
      times: Infinity,
      mode: () => {
        if (crashed++ === 0) throw new Error('worker lost');
      },
    });
    const taskQueue = `q-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: faults.wrapAgents([{ agent, tools: { create_ticket: { retry: { initialInterval: '10 ms' } } } }]),
      store: faults.wrapStore(new MemoryEffectStore()),
      approvalSecret: SECRET,
      workerOptions: { workflowBundle: bundle },
    });
    const result = await worker.runUntil(async () => {
      const handle = await startAgentRun(env.client, { agent: 'desk', prompt: 'Tidy the desk', taskQueue });
      const until = Date.now() + 20_000;
      let pending = await listPendingApprovals(env.client, handle.workflowId);
      while (pending.length === 0 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        pending = await listPendingApprovals(env.client, handle.workflowId);
      }
      expect(pending).toEqual([expect.objectContaining({ toolName: 'delete_ticket', input: { title: 'stale' } })]);
      expect(desk.calls.delete_ticket - before.delete_ticket).toBe(0);
      await decideApproval(env.client, handle.workflowId, {
        toolCallId: pending[0]?.toolCallId ?? '',
        approved: true,
        secret: SECRET,
      });
      return handle.result();
    });
    expect(crashed).toBe(1);
    expect(desk.calls.create_ticket - before.create_ticket).toBe(1);
    expect(desk.calls.delete_ticket - before.delete_ticket).toBe(1);
    expect(desk.tickets.filter((t) => t.title === title)).toHaveLength(1);
    expect(result.effects.map((e) => [e.toolName, e.outcome])).toEqual([
      ['create_ticket', 'reconciled'],
      ['create_ticket', 'recorded'],
      ['delete_ticket', 'executed'],
      ['create_ticket', 'recorded'],
    ]);
    expect(result.approvals).toEqual([expect.objectContaining({ toolName: 'delete_ticket', approved: true })]);
  });
});
