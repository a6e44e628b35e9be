// The anchor of bench/history.ts: the same agent as an AI SDK loop in the workflow, model calls
// made durable by @temporalio/ai-sdk (its invokeModel activity), the comment a plain activity
// (what the official plugin's users write: at least once).
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { proxyActivities } from '@temporalio/workflow';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import type { CommentInput } from './history-remote.js';

const { postComment } = proxyActivities<{ postComment(input: CommentInput): Promise<{ id: number }> }>({
  startToCloseTimeout: '1 minute',
});

export async function anchorWorkflow(input: {
  issue: number;
  comments: number;
  prompt: string;
  instructions: string;
}): Promise<{ text: string; steps: number }> {
  const result = await generateText({
    model: temporalProvider.languageModel('scripted'),
    instructions: input.instructions,
    prompt: input.prompt,
    tools: {
      comment: tool({
        description: 'Posts a comment on the issue.',
        inputSchema: z.object({ issue: z.number(), body: z.string() }),
        execute: (call) => postComment(call),
      }),
    },
    stopWhen: stepCountIs(input.comments + 1),
  });
  return { text: result.text, steps: result.steps.length };
}
