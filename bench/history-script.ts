// The scripted agent every side of bench/history.ts runs: "post N comments on issue #I, one per
// step, then stop". The run's N and issue travel in the prompt, so one model serves every run.
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { scriptedModel, type ScriptedStep } from '../testing/scripted-model.js';

/** Longest run the bench asks for (comment steps; the run has one more, the final text). */
export const MAX_COMMENT_STEPS = 40;

/** A constant-size body, so each step adds a message of the same size. */
const FILLER = 'Looked at the logs and the stack trace; the fix is on its way. '.repeat(2);

export function promptFor(issue: number, comments: number): string {
  return `Post ${comments} comments on issue #${issue}, one per step, then stop.`;
}

function parsePrompt(text: string): { issue: number; comments: number } {
  const match = /Post (\d+) comments on issue #(\d+)/.exec(text);
  if (match === null) throw new Error(`bench script: unexpected prompt ${JSON.stringify(text)}`);
  return { comments: Number(match[1]), issue: Number(match[2]) };
}

/** Step `step` (0-based) of a run asked for `comments` comments: a comment call, or the final text. */
export function answerFor(step: number, issue: number, comments: number): ScriptedStep {
  if (step >= comments) return { text: `Posted ${comments} comments.` };
  return {
    toolCalls: [
      {
        toolName: 'comment',
        toolCallId: `call-${step}-0`,
        input: { issue, body: `Comment ${String(step + 1).padStart(2, '0')}: ${FILLER}` },
      },
    ],
  };
}

function firstUserText(prompt: LanguageModelV4CallOptions['prompt']): string {
  for (const message of prompt) {
    if (message.role !== 'user') continue;
    for (const part of message.content) if (part.type === 'text') return part.text;
  }
  return '';
}

/** The scripted model of the library and @temporalio/ai-sdk sides (the floor uses {@link answerFor} directly). */
export function benchModel() {
  return scriptedModel(
    Array.from(
      { length: MAX_COMMENT_STEPS + 1 },
      (_, step) =>
        ({ prompt }: { prompt: LanguageModelV4CallOptions['prompt'] }) => {
          const { issue, comments } = parsePrompt(firstUserText(prompt));
          return answerFor(step, issue, comments);
        },
    ),
  );
}
