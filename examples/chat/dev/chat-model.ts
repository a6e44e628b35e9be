import type { LanguageModelV4, LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { scriptedModel, type ScriptedStep } from '../../../testing/scripted-model.js';

type Prompt = LanguageModelV4Prompt;

function textOf(message: Prompt[number] | undefined): string {
  if (message === undefined) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** The comment results in `messages`: what each posted comment's tool result says. */
function postedComments(messages: Prompt): Array<{ issue: number; commentId: number }> {
  return messages
    .filter((m) => m.role === 'tool')
    .flatMap((m) => m.content)
    .flatMap((part) => {
      if (part.type !== 'tool-result' || part.toolName !== 'comment' || part.output.type !== 'json') return [];
      const value = part.output.value as { issue?: unknown; commentId?: unknown } | null;
      return typeof value?.issue === 'number' && typeof value.commentId === 'number'
        ? [{ issue: value.issue, commentId: value.commentId }]
        : [];
    });
}

/**
 * The chat's answers, from the prompt alone (so a retried step gets the same answer). A message
 * that names an issue (`#N`) gets: first, what it will do and a `comment` call on that issue (its
 * call id names the turn); then, once the call's result is in, what became of it, in enough words
 * that a worker can be killed while they stream. Any other message is answered from the chat's
 * history: the comments the earlier turns posted (their tool results in the prompt).
 */
function answer({ prompt }: { prompt: Prompt }): ScriptedStep {
  const lastUser = prompt.findLastIndex((m) => m.role === 'user');
  const turn = prompt.filter((m) => m.role === 'user').length;
  const asked = textOf(prompt[lastUser]);
  const thisTurn = prompt.slice(lastUser + 1);
  const issueNamed = /#(\d+)/.exec(asked)?.[1];
  if (issueNamed === undefined) {
    const earlier = postedComments(prompt.slice(0, lastUser));
    if (earlier.length === 0)
      return { text: 'I have posted nothing in this chat yet. Name an issue (#1) and I will answer it.' };
    const list = earlier.map((c) => `comment ${c.commentId} on issue #${c.issue}`).join(', ');
    return {
      text: `Earlier in this chat I posted ${earlier.length === 1 ? 'one comment' : `${earlier.length} comments`}: ${list}.`,
    };
  }
  const issue = Number(issueNamed);
  const result = thisTurn.find((m) => m.role === 'tool');
  if (result === undefined) {
    return {
      text: `Let me answer issue #${issue}. I will post one comment there; it waits for your approval first.`,
      toolCalls: [
        {
          toolCallId: `comment-${issue}-turn-${turn}`,
          toolName: 'comment',
          input: { issue, body: `Thanks for the report! We can reproduce issue #${issue} and will follow up here.` },
        },
      ],
    };
  }
  if (postedComments(thisTurn).length === 0) {
    if (!JSON.stringify(result.content).includes('execution-denied')) {
      return { text: `The comment could not be posted on issue #${issue}: the tracker refused it. Try again later.` };
    }
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
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });
}

/**
 * The chat example's model: the demo's deterministic scripted model (a retried step gets the same
 * answer) giving {@link answer}'s answers, paced: every streamed word waits `tokenMs` (default 120 ms),
 * so text reaches the page while the step runs and a worker killed mid-step is killed
 * mid-sentence. `doGenerate` (a model step that does not stream) takes as long for the whole answer.
 */
export function chatModel(options: { tokenMs?: number } = {}): LanguageModelV4 {
  const tokenMs = options.tokenMs ?? 120;
  const scripted = scriptedModel(answer, { modelId: 'chat-scripted' });
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
