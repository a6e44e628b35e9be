// The model of bench:stream: TEXT as tokens, one every `intervalMs`, each stamped when sent.
// (bench/ and test/ do not import each other: the tests have their own streaming model.)
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';

/** Each word with the space before it. */
export function tokens(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

export function timedModel(text: string, intervalMs: number, sent: number[]): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'chamvi-bench',
    modelId: 'timed',
    supportedUrls: {},
    doGenerate(): never {
      throw new Error('timedModel streams only');
    },
    doStream() {
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'text-start', id: 't' });
          for (const token of tokens(text)) {
            await new Promise((resolve) => setTimeout(resolve, intervalMs));
            sent.push(performance.now());
            controller.enqueue({ type: 'text-delta', id: 't', delta: token });
          }
          controller.enqueue({ type: 'text-end', id: 't' });
          controller.enqueue({
            type: 'finish',
            finishReason: { unified: 'stop', raw: undefined },
            usage: {
              inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
              outputTokens: { total: 1, text: 1, reasoning: 0 },
            },
          });
          controller.close();
        },
      });
      return Promise.resolve({ stream });
    },
  };
}
