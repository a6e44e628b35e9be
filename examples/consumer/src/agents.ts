import { openai } from '@ai-sdk/openai';
import { defineAgent } from '@chamvi/temporal';
import { scriptedModel } from '@chamvi/temporal/testing';
import { comment } from './tools.js';

// OFFLINE=1: a scripted model (no API key, no network) that comments on issue 42, then answers.
// Otherwise OpenAI's Responses API: OPENAI_API_KEY, or OPENAI_BASE_URL for a server speaking it.
const model =
  process.env.OFFLINE === '1'
    ? scriptedModel([
        { toolCalls: [{ toolName: 'comment', input: { issue: 42, body: 'Thanks, we are looking into it.' } }] },
        { text: 'Done.' },
      ])
    : openai('gpt-4o-mini');

export const responder = defineAgent({
  name: 'responder',
  model,
  instructions: 'Answer new issues.',
  tools: { comment },
});
