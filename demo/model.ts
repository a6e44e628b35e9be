import type { LanguageModelV4, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { scriptedModel } from '@chamvi/temporal/testing';

/** The demo's model and a one-line description of it. */
export interface DemoModel {
  readonly model: LanguageModelV4;
  readonly description: string;
}

/** True when the environment configures a real, OpenAI-compatible model. */
export function realModelConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env['OPENAI_API_KEY'] || env['OPENAI_BASE_URL']);
}

function promptText(prompt: LanguageModelV4Prompt): string {
  return prompt
    .filter((m) => m.role === 'user')
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('\n');
}

/**
 * The scripted demo model (deterministic, offline): for a prompt naming issue #N with a title, step
 * 0 posts one comment and adds the label "triage" (two tool calls at once); step 1 answers with a
 * one-line summary. A retried or redone step gets the same answer.
 */
export function scriptedDemoModel(): LanguageModelV4 {
  const issueOf = (prompt: LanguageModelV4Prompt): { issue: number; title: string } => {
    const text = promptText(prompt);
    const match = /#(\d+)(?::\s*(.*))?/.exec(text);
    return { issue: Number(match?.[1] ?? 1), title: match?.[2]?.split('\n')[0]?.trim() ?? 'your issue' };
  };
  return scriptedModel(
    [
      ({ prompt }) => {
        const { issue, title } = issueOf(prompt);
        return {
          toolCalls: [
            {
              toolName: 'comment',
              input: { issue, body: `Thanks for reporting "${title}". We can reproduce it and will follow up here.` },
            },
            { toolName: 'label', input: { issue, labels: ['triage'] } },
          ],
        };
      },
      ({ prompt }) => ({ text: `Answered issue #${issueOf(prompt).issue} and labelled it triage.` }),
    ],
    { modelId: 'chamvi-demo' },
  );
}

/**
 * The model the demo agent runs: an OpenAI-compatible model when OPENAI_API_KEY or
 * OPENAI_BASE_URL is set (CHAMVI_MODEL names it, default gpt-4o-mini; for a local Ollama set
 * OPENAI_BASE_URL=http://localhost:11434/v1 and CHAMVI_MODEL=llama3.1), else the scripted demo model.
 */
export async function demoModel(env: NodeJS.ProcessEnv = process.env): Promise<DemoModel> {
  if (!realModelConfigured(env))
    return { model: scriptedDemoModel(), description: 'scripted demo model (deterministic)' };
  const { createOpenAI } = await import('@ai-sdk/openai');
  const baseURL = env['OPENAI_BASE_URL'] || undefined;
  const provider = createOpenAI({ apiKey: env['OPENAI_API_KEY'] || 'not-needed', ...(baseURL ? { baseURL } : {}) });
  const modelId = env['CHAMVI_MODEL'] || 'gpt-4o-mini';
  return { model: provider.chat(modelId), description: `${modelId} via ${baseURL ?? 'api.openai.com'}` };
}
