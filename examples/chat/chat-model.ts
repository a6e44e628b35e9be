import type { LanguageModelV4, LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { scriptedModel, type ScriptedStep } from '../../testing/scripted-model.js';

function userText(prompt: LanguageModelV4Prompt): string {
  return prompt
    .filter((m) => m.role === 'user')
    .flatMap((m) => m.content)
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('\n');
}

const issueOf = (prompt: LanguageModelV4Prompt): number => Number(/#(\d+)/.exec(userText(prompt))?.[1] ?? 1);

/** True when the tool result in the prompt says the comment was refused (denied by the approver). */
function commentRefused(prompt: LanguageModelV4Prompt): boolean {
  const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
  return results.some(
    (part) => part.type === 'tool-result' && /denied|refused|not approved/i.test(JSON.stringify(part)),
  );
}

/**
 * The chat script: step 0 says what it will do and asks to post one comment on the issue the
 * message names (`#N`, default 1); step 1 reports what became of it, in enough words that a worker
 * can be killed while they stream.
 */
const CHAT_SCRIPT = [
  ({ prompt }: { prompt: LanguageModelV4Prompt }): ScriptedStep => {
    const issue = issueOf(prompt);
    return {
      text: `Let me answer issue #${issue}. I will post one comment there; it waits for your approval first.`,
      toolCalls: [
        {
          toolCallId: `comment-${issue}`,
          toolName: 'comment',
          input: { issue, body: `Thanks for the report! We can reproduce issue #${issue} and will follow up here.` },
        },
      ],
    };
  },
  ({ prompt }: { prompt: LanguageModelV4Prompt }): ScriptedStep => {
    const issue = issueOf(prompt);
    if (commentRefused(prompt)) {
      return {
        text: `You denied the comment, so nothing was posted on issue #${issue}. Tell me what to change and I will ask again.`,
      };
    }
    return {
      text:
        `The comment is on issue #${issue} now. It carries a signed effect marker, so if a worker dies after posting it, ` +
        'the retry finds the marker and reconciles the comment instead of posting it twice. ' +
        'Each word of this reply streams from the model step activity, so you can kill the worker mid-sentence ' +
        'and watch another one pick the step up and finish the run.',
    };
  },
];

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });
}

/**
 * The chat example's model: the demo's deterministic scripted model (a retried step gets the same
 * answer) running {@link CHAT_SCRIPT}, paced: every streamed word waits `tokenMs` (default 120 ms),
 * so text reaches the page while the step runs and a worker killed mid-step is killed
 * mid-sentence. `doGenerate` (a model step that does not stream) takes as long for the whole answer.
 */
export function chatModel(options: { tokenMs?: number } = {}): LanguageModelV4 {
  const tokenMs = options.tokenMs ?? 120;
  const scripted = scriptedModel(CHAT_SCRIPT, { modelId: 'chat-scripted' });
  return {
    specificationVersion: 'v4',
    provider: 'chamvi-chat-example',
    modelId: scripted.modelId,
    supportedUrls: {},
    async doGenerate(call) {
      const answer = await scripted.doGenerate(call);
      const text = answer.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      await sleep(tokenMs * (text.match(/\S+/g) ?? []).length, call.abortSignal);
      return answer;
    },
    async doStream(call) {
      const { stream } = await scripted.doStream(call);
      const paced = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
        async transform(part, controller) {
          if (part.type === 'text-delta') await sleep(tokenMs, call.abortSignal);
          controller.enqueue(part);
        },
      });
      return { stream: stream.pipeThrough(paced) };
    },
  };
}
