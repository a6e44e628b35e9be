import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from '@ai-sdk/provider';

/** A tool call a scripted step makes. @public */
export interface ScriptedToolCall {
  /** Name of the tool to call. */
  readonly toolName: string;
  /** The call's input (sent to the tool as JSON). */
  readonly input: unknown;
  /** Default: `call-<step>-<index>`. */
  readonly toolCallId?: string;
}

/** One model step of a script: text, tool calls, or both. @public */
export interface ScriptedStep {
  /** The step's text. */
  readonly text?: string;
  /** The tool calls the step makes. */
  readonly toolCalls?: readonly ScriptedToolCall[];
  /** The tokens the step reports it used. @defaultValue `{ inputTokens: 10, outputTokens: 10 }` */
  readonly usage?: { readonly inputTokens?: number; readonly outputTokens?: number };
}

/** A step given directly, or computed from the call (the prompt, and how often this step was asked). @public */
export type ScriptEntry =
  ScriptedStep | ((call: { prompt: LanguageModelV4CallOptions['prompt']; attempt: number }) => ScriptedStep);

/**
 * A deterministic language model for tests and demos. It answers step N of a run (N = the number
 * of assistant messages in the prompt, so a retried or redone step gets step N again) with
 * `script[N]`; a function entry can vary the answer by `attempt` (1 for the first time step N is
 * asked, 2 for the redo, ...). It throws when the run asks for a step past the script's end, so
 * a test never silently loops. A function instead of a list answers every step (a chat whose
 * prompt grows turn after turn).
 * @public
 */
export function scriptedModel(
  script:
    | readonly ScriptEntry[]
    | ((call: { prompt: LanguageModelV4CallOptions['prompt']; attempt: number }) => ScriptedStep),
  options: { modelId?: string } = {},
): LanguageModelV4 & { readonly calls: number } {
  const asked = new Map<number, number>();
  let calls = 0;
  const model = {
    specificationVersion: 'v4' as const,
    provider: 'chamvi-scripted',
    modelId: options.modelId ?? 'scripted',
    supportedUrls: {},
    get calls() {
      return calls;
    },
    doGenerate(call: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
      calls++;
      const step = call.prompt.filter((m) => m.role === 'assistant').length;
      const attempt = (asked.get(step) ?? 0) + 1;
      asked.set(step, attempt);
      const entry = typeof script === 'function' ? script : script[step];
      if (entry === undefined) {
        return Promise.reject(
          new Error(
            `scriptedModel: the run asked for step ${step}, but the script has ${script.length} step(s). Add a step, or lower maxSteps.`,
          ),
        );
      }
      const scripted = typeof entry === 'function' ? entry({ prompt: call.prompt, attempt }) : entry;
      const content: LanguageModelV4Content[] = [];
      if (scripted.text !== undefined) content.push({ type: 'text', text: scripted.text });
      (scripted.toolCalls ?? []).forEach((tc, i) =>
        content.push({
          type: 'tool-call',
          toolCallId: tc.toolCallId ?? `call-${step}-${i}`,
          toolName: tc.toolName,
          input: JSON.stringify(tc.input),
        }),
      );
      const hasCalls = (scripted.toolCalls ?? []).length > 0;
      const { inputTokens: input = 10, outputTokens: output = 10 } = scripted.usage ?? {};
      return Promise.resolve({
        content,
        finishReason: { unified: hasCalls ? 'tool-calls' : 'stop', raw: undefined },
        usage: {
          inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: output, text: output, reasoning: 0 },
        },
        warnings: [],
      });
    },
    // The same answer as doGenerate, streamed word by word (a worker with a run stream calls streamText).
    async doStream(call: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
      const answer = await model.doGenerate(call);
      return { stream: streamOf(answer) };
    },
  };
  return model;
}

/** A generate result as the stream parts a provider would send: text word by word, then the tool calls. */
function streamOf(answer: LanguageModelV4GenerateResult): ReadableStream<LanguageModelV4StreamPart> {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  answer.content.forEach((part, i) => {
    if (part.type === 'text') {
      const id = `text-${i}`;
      parts.push({ type: 'text-start', id });
      for (const delta of (part.text.match(/\S*\s*/g) ?? []).filter(Boolean))
        parts.push({ type: 'text-delta', id, delta });
      parts.push({ type: 'text-end', id });
    } else if (part.type === 'tool-call') {
      parts.push(part);
    }
  });
  parts.push({ type: 'finish', finishReason: answer.finishReason, usage: answer.usage });
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}
