// The bare-Temporal floor of bench/history.ts: the same loop (a model step, then its comment) as
// plain activities with canned answers and the smallest inputs, no agent framework at all.
import { proxyActivities } from '@temporalio/workflow';
import type { CommentInput } from './history-remote.js';
import type { ScriptedStep } from '../testing/scripted-model.js';

interface FloorActivities {
  cannedModelStep(input: { issue: number; comments: number; step: number }): Promise<ScriptedStep>;
  postComment(input: CommentInput): Promise<{ id: number }>;
}

const { cannedModelStep, postComment } = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

export async function floorWorkflow(input: {
  issue: number;
  comments: number;
}): Promise<{ text: string; steps: number }> {
  for (let step = 0; ; step++) {
    const answer = await cannedModelStep({ ...input, step });
    const calls = answer.toolCalls ?? [];
    if (calls.length === 0) return { text: answer.text ?? '', steps: step + 1 };
    await Promise.all(calls.map((call) => postComment(call.input as CommentInput)));
  }
}
