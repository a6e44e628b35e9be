import { describe, expect, it } from '@jest/globals';
import type { ToolExecutionOptions } from 'ai';
import { z } from 'zod';
import { defineAgent, defineAgentTool, inputFingerprint, runAgent, type Agent } from '../../src/index.js';
import { agentToolOf } from '../../src/agent/agent-tool.js';
import { AgentToolOutsideRunError } from '../../src/errors/errors.js';
import { AgentRegistry } from '../../activities/agent-registry.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { NoteBoard, noteTool } from '../fixtures/compensating-tools.js';

function researcher(board: NoteBoard, name = 'researcher'): Agent {
  return defineAgent({
    name,
    model: scriptedModel([{ toolCalls: [{ toolName: 'note', input: { text: 'tides' } }] }, { text: 'Found: tides' }]),
    tools: { note: noteTool(board) },
  });
}

function lead(sub: Agent): Agent {
  return defineAgent({
    name: 'lead',
    model: scriptedModel([
      { toolCalls: [{ toolName: 'research', input: { prompt: 'tides' } }] },
      ({ prompt }) => {
        const result = prompt
          .flatMap((m) => (m.role === 'tool' ? m.content : []))
          .find((p) => p.type === 'tool-result');
        return { text: `lead got ${JSON.stringify(result?.type === 'tool-result' ? result.output : null)}` };
      },
    ]),
    tools: { research: defineAgentTool(sub) },
  });
}

const options = { toolCallId: 'c1', messages: [] } as unknown as ToolExecutionOptions<never>;

describe('defineAgentTool', () => {
  it('refuses what is not an agent, and an input schema without a prompt function, naming the fix', () => {
    expect(() => defineAgentTool({ name: 'x' } as unknown as Agent)).toThrow(/must be an agent made by defineAgent/);
    const board = new NoteBoard();
    expect(() => defineAgentTool(researcher(board), { inputSchema: z.object({ topic: z.string() }) })).toThrow(
      /give prompt\(input\) too/,
    );
  });

  it('describes itself by the agent and asks for a prompt by default; a spread copy is still the agent tool', async () => {
    const sub = researcher(new NoteBoard());
    const agentTool = defineAgentTool(sub);
    expect(agentTool.description).toBe('Delegates a task to the "researcher" agent.');
    const copy = { ...agentTool, description: 'Research a topic.' };
    expect(agentToolOf(copy)?.agent).toBe(sub);
    expect(agentToolOf({ ...noteTool(new NoteBoard()) })).toBeUndefined();
  });

  it('outside runAgent and a worker, its execute throws AgentToolOutsideRunError rather than run the agent unmanaged', async () => {
    const board = new NoteBoard();
    const agentTool = defineAgentTool(researcher(board));
    let thrown: unknown;
    try {
      await agentTool.execute?.({ prompt: 'tides' }, options);
    } catch (error) {
      thrown = error;
    }
    expect(AgentToolOutsideRunError.isInstance(thrown)).toBe(true);
    expect(String(thrown)).toMatch(/runAgent/);
    expect(board.log).toEqual([]);
  });
});

describe('a sub-agent under runAgent', () => {
  it('runs in the same process on the same store with the derived run id; run again, its effect is not applied again', async () => {
    const board = new NoteBoard();
    const store = new MemoryEffectStore();
    const parent = lead(researcher(board));
    const first = await runAgent(parent, { prompt: 'Lead.', store, runId: 'run-1' });
    const childRunId = `run-1:research:0:${inputFingerprint({ prompt: 'tides' }).slice(0, 16)}`;
    expect(first.text).toBe('lead got {"type":"text","value":"Found: tides"}');
    expect(first.effects).toEqual([
      expect.objectContaining({
        toolName: 'note',
        outcome: 'executed',
        key: expect.stringMatching(`^${childRunId}:note:`),
      }),
    ]);
    const again = await runAgent(lead(researcher(board)), { prompt: 'Lead.', store, runId: 'run-1' });
    expect(again.effects.map((e) => e.outcome)).toEqual(['recorded']);
    expect(board.log).toEqual(['post:tides']);
  });

  it("the run's allow applies to the sub-agent's tools too", async () => {
    const board = new NoteBoard();
    const result = await runAgent(lead(researcher(board)), {
      prompt: 'Lead.',
      store: new MemoryEffectStore(),
      allow: (toolName) => toolName !== 'note',
    });
    expect(board.log).toEqual([]);
    expect(result.effects).toEqual([]);
  });
});

describe('a worker registers sub-agents with the agents that use them', () => {
  it('an agent tool brings its agent, and that agent its own sub-agents', () => {
    const board = new NoteBoard();
    const deepest = researcher(board, 'archivist');
    const middle = defineAgent({
      name: 'researcher',
      model: scriptedModel([{ text: 'ok' }]),
      tools: { archive: defineAgentTool(deepest) },
    });
    expect(new AgentRegistry([lead(middle)]).names()).toEqual(['lead', 'researcher', 'archivist']);
    // Registered on its own as well: the same agent, once.
    expect(new AgentRegistry([lead(middle), middle]).names().sort()).toEqual(['archivist', 'lead', 'researcher']);
  });

  it('a sub-agent that shares its name with a different registered agent is refused, naming both', () => {
    const board = new NoteBoard();
    const other = researcher(board);
    expect(() => new AgentRegistry([lead(researcher(board)), other])).toThrow(
      /tool "research" for an agent named "researcher", but a different agent of that name is registered/,
    );
  });
});
