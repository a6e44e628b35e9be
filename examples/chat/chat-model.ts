import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from '@ai-sdk/provider';

/** One answer of the chat model: the text it streams, then the tool calls it makes (if any). */
interface ChatAnswer {
  readonly text: string;
  readonly toolCalls: readonly { readonly toolCallId: string; readonly toolName: string; readonly input: unknown }[];
}

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

function userText(prompt: LanguageModelV4Prompt): string {
  return prompt
    .filter((m) => m.role === 'user')
    .flatMap((m) => m.content)
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('\n');
}

/** True when the tool result in the prompt says the comment was refused (denied by the approver). */
function commentRefused(prompt: LanguageModelV4Prompt): boolean {
  const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
  return results.some(
    (part) => part.type === 'tool-result' && /denied|refused|not approved/i.test(JSON.stringify(part)),
  );
}

/**
 * The scripted chat answer for step N of a run (N = assistant messages in the prompt, so a retried
 * step gets the same answer): step 0 says what it will do and asks to post one comment on the issue
 * the message names (`#N`, default 1); step 1 reports what became of it, in enough words that a
 * worker can be killed while they stream.
 */
export function chatAnswer(prompt: LanguageModelV4Prompt): ChatAnswer {
  const step = prompt.filter((m) => m.role === 'assistant').length;
  const issue = Number(/#(\d+)/.exec(userText(prompt))?.[1] ?? 1);
  if (step === 0) {
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
  }
  const text = commentRefused(prompt)
    ? `You denied the comment, so nothing was posted on issue #${issue}. Tell me what to change and I will ask again.`
    : `The comment is on issue #${issue} now. It carries a signed effect marker, so if a worker dies after posting it, ` +
      'the retry finds the marker and reconciles the comment instead of posting it twice. ' +
      'Each word of this reply streams from the model step activity, so you can kill the worker mid-sentence ' +
      'and watch another one pick the step up and finish the run.';
  return { text, toolCalls: [] };
}

/** Splits text into word-sized deltas that keep their spaces, so they concatenate back exactly. */
export function wordDeltas(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [];
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });
}

/**
 * The chat example's model: deterministic and offline, like the demo's scripted model, but it
 * streams (`doStream`) one word every `tokenMs` (default 120 ms), so text reaches the page while
 * the step runs and a worker killed mid-step is killed mid-sentence. `doGenerate` takes as long and
 * returns the same answer at once, for a model step that does not stream.
 */
export function chatModel(options: { tokenMs?: number } = {}): LanguageModelV4 {
  const tokenMs = options.tokenMs ?? 120;
  const toolCallParts = (answer: ChatAnswer): LanguageModelV4Content[] =>
    answer.toolCalls.map((call) => ({
      type: 'tool-call' as const,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input: JSON.stringify(call.input),
    }));
  const finishReason = (answer: ChatAnswer) => ({
    unified: answer.toolCalls.length > 0 ? ('tool-calls' as const) : ('stop' as const),
    raw: undefined,
  });
  return {
    specificationVersion: 'v4',
    provider: 'chamvi-chat-example',
    modelId: 'chat-scripted',
    supportedUrls: {},
    async doGenerate(call: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
      const answer = chatAnswer(call.prompt);
      await sleep(tokenMs * wordDeltas(answer.text).length, call.abortSignal);
      const content: LanguageModelV4Content[] = [{ type: 'text', text: answer.text }, ...toolCallParts(answer)];
      return { content, finishReason: finishReason(answer), usage: USAGE, warnings: [] };
    },
    async doStream(call: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
      const answer = chatAnswer(call.prompt);
      const deltas = wordDeltas(answer.text);
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          try {
            controller.enqueue({ type: 'stream-start', warnings: [] });
            controller.enqueue({ type: 'text-start', id: 'text-0' });
            for (const delta of deltas) {
              await sleep(tokenMs, call.abortSignal);
              controller.enqueue({ type: 'text-delta', id: 'text-0', delta });
            }
            controller.enqueue({ type: 'text-end', id: 'text-0' });
            for (const part of toolCallParts(answer)) controller.enqueue(part as LanguageModelV4StreamPart);
            controller.enqueue({ type: 'finish', usage: USAGE, finishReason: finishReason(answer) });
            controller.close();
          } catch (error) {
            controller.error(error);
          }
        },
      });
      return { stream };
    },
  };
}
