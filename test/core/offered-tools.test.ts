// The tool set a model step offers the model (activities/offered-tools.ts): no execute, no
// needsApproval, and each input schema converted to JSON Schema once per agent, not once per step.
import { describe, expect, it } from '@jest/globals';
import { asSchema, jsonSchema, tool, type ToolSet } from 'ai';
import { z } from 'zod';
import { offeredTools } from '../../activities/offered-tools.js';

/** A tool whose schema counts how often the AI SDK builds it (a lazy schema is built on every `asSchema`). */
function countingTool() {
  const built = { count: 0 };
  const schema = () => {
    built.count++;
    return jsonSchema<{ n: number }>(
      { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      {
        validate: (value) =>
          typeof (value as { n?: unknown }).n === 'number'
            ? { success: true, value: value as { n: number } }
            : { success: false, error: new Error('n must be a number') },
      },
    );
  };
  return { built, tool: tool({ description: 'Counts.', inputSchema: schema, execute: () => 'done' }) };
}

describe('the tools a model step offers', () => {
  it("an agent's input schemas are built once however many steps offer them", () => {
    const { built, tool: counted } = countingTool();
    const tools: ToolSet = { counted };
    for (let step = 0; step < 3; step++) {
      // What the AI SDK does with each offered tool when it prepares a call.
      expect(asSchema(offeredTools(tools)['counted']?.inputSchema).jsonSchema).toMatchObject({ required: ['n'] });
    }
    expect(built.count).toBe(1);
  });

  it('the offered tools have no execute and no needsApproval, and the agent keeps its own', () => {
    const { tool: counted } = countingTool();
    const tools: ToolSet = { counted: { ...counted, needsApproval: true } };
    const offered = offeredTools(tools)['counted'];
    expect(offered?.execute).toBeUndefined();
    expect(offered?.needsApproval).toBeUndefined();
    expect(offered?.description).toBe('Counts.');
    expect(typeof tools['counted']?.execute).toBe('function');
    expect(tools['counted']?.needsApproval).toBe(true);
  });

  it('an offered zod schema still validates (defaults apply, invalid input is refused)', async () => {
    const tools: ToolSet = {
      post: tool({ inputSchema: z.object({ body: z.string(), draft: z.boolean().default(false) }), execute: () => 1 }),
    };
    const schema = asSchema(offeredTools(tools)['post']?.inputSchema);
    expect(schema.jsonSchema).toMatchObject({ type: 'object', required: ['body'] });
    await expect(schema.validate?.({ body: 'hi' })).resolves.toEqual({
      success: true,
      value: { body: 'hi', draft: false },
    });
    await expect(schema.validate?.({ body: 3 })).resolves.toMatchObject({ success: false });
  });
});
