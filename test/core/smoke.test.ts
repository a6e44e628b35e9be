import { describe, expect, it } from '@jest/globals';
import { generateText, isStepCount } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { defineEffectTool, MemoryEffectStore, defineAgent, runAgent, effectMarker } from '../../src/index.js';

describe('smoke', () => {
  it('runs', async () => {
    let n = 0;
    const comment = defineEffectTool({
      description: 'c',
      inputSchema: z.object({ issue: z.number(), body: z.string() }),
      execute: async ({ issue }, { context }) => {
        n++;
        return { id: issue, run: context.run.runId };
      },
    });
    const model = new MockLanguageModelV4({
      doGenerate: async () => ({
        content: [
          { type: 'tool-call', toolCallId: 'a', toolName: 'comment', input: JSON.stringify({ issue: 1, body: 'x' }) },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      }),
    });
    const agent = defineAgent({ name: 'a', model, tools: { comment } });
    const res = await runAgent(agent, { prompt: 'hi', store: new MemoryEffectStore(), runId: 'r1', maxSteps: 2 });
    console.log(JSON.stringify(res.effects), n, effectMarker('a--b>'));
    expect(n).toBe(1);
    void generateText;
    void isStepCount;
  });
});
