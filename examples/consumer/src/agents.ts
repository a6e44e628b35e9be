import { openai } from '@ai-sdk/openai';
import { defineAgent } from '@chamvi/temporal';
import { comment } from './tools.js';

// OPENAI_API_KEY, or OPENAI_BASE_URL for any server speaking OpenAI's Responses API
export const responder = defineAgent({
  name: 'responder',
  model: openai('gpt-4o-mini'),
  instructions: 'Answer new issues.',
  tools: { comment },
});
