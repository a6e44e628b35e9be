import { describe, expect, it } from '@jest/globals';
import type { Telemetry } from 'ai';
import { defineAgent } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { runAgentUnderTest } from '../../testing/run-agent-under-test.js';
import { scriptedModel } from '../../testing/scripted-model.js';

/** A telemetry integration that records which operations it saw, with their functionId. */
function recorder(): { integration: Telemetry; seen: Array<{ event: string; functionId?: string }> } {
  const seen: Array<{ event: string; functionId?: string }> = [];
  const integration: Telemetry = {
    onStart: (event) => {
      seen.push({ event: 'start', ...(event.functionId !== undefined ? { functionId: event.functionId } : {}) });
    },
    onLanguageModelCallStart: (event) => {
      seen.push({ event: 'model-call', ...(event.functionId !== undefined ? { functionId: event.functionId } : {}) });
    },
  };
  return { integration, seen };
}

describe("an agent's AI SDK telemetry reaches the model steps", () => {
  it("the agent's telemetry settings (functionId, integrations) are passed to every model call of the run", async () => {
    const { integration, seen } = recorder();
    const agent = defineAgent({
      name: 'observed',
      model: scriptedModel([{ text: 'Seen.' }]),
      instructions: 'Be observed.',
      telemetry: { functionId: 'triage', integrations: [integration] },
    });
    const { output } = await runAgentUnderTest({ agents: [agent], store: new MemoryEffectStore(), prompt: 'hi' });
    expect(output.text).toBe('Seen.');
    expect(seen).toEqual(
      expect.arrayContaining([
        { event: 'start', functionId: 'triage' },
        { event: 'model-call', functionId: 'triage' },
      ]),
    );
  }, 60_000);

  it("an agent without telemetry settings sends nothing to another agent's integration", async () => {
    const { integration, seen } = recorder();
    const observed = defineAgent({
      name: 'observed',
      model: scriptedModel([{ text: 'Seen.' }]),
      telemetry: { functionId: 'triage', integrations: [integration] },
    });
    const quiet = defineAgent({ name: 'quiet', model: scriptedModel([{ text: 'Unseen.' }]) });
    const { output } = await runAgentUnderTest({
      agents: [observed, quiet],
      agent: 'quiet',
      store: new MemoryEffectStore(),
      prompt: 'hi',
    });
    expect(output.text).toBe('Unseen.');
    expect(seen).toEqual([]);
  }, 60_000);
});
