// A workflow that runs its own AI SDK loop inside the workflow, with model calls made durable by
// @temporalio/ai-sdk (each model call is an activity through its provider), and whose tools call
// @chamvi/temporal effect tools: each tool call runs the effect protocol in the chamvi.effectCall
// activity on the worker, so a comment is posted at most once per effect key, crash or not.
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { effectToolCalls, type EffectCallReport } from '@chamvi/temporal/workflows';

export interface TriageInput {
  readonly issue: number;
  /** Model id the worker's provider serves (AiSdkPlugin({ modelProvider })). */
  readonly model?: string;
  /** The agent registered on the worker whose effect tools this workflow calls. */
  readonly toolbox?: string;
}

export interface TriageOutput {
  readonly text: string;
  readonly steps: number;
  readonly effects: readonly EffectCallReport[];
}

export async function triageWorkflow(input: TriageInput): Promise<TriageOutput> {
  const chamvi = effectToolCalls({ agent: input.toolbox ?? 'toolbox' });
  const result = await generateText({
    model: temporalProvider.languageModel(input.model ?? 'gpt-4o-mini'),
    instructions: 'Answer the issue with one short comment, then stop.',
    prompt: `Answer issue #${input.issue}.`,
    tools: {
      comment: tool({
        description: 'Posts a comment on the issue.',
        inputSchema: z.object({ issue: z.number(), body: z.string() }),
        // The registered effect tool `comment` runs in an activity; the result comes back here.
        execute: chamvi.execute('comment'),
      }),
    },
    stopWhen: stepCountIs(5),
  });
  return { text: result.text, steps: result.steps.length, effects: chamvi.effects };
}
