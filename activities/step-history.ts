import type { LanguageModelUsage, ModelMessage, StepResult, ToolSet } from 'ai';
import type { JsonMessage } from '../common/index.js';

/** A message part as the conversation stores it (AI SDK message content, as JSON). */
interface Part {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** How a rebuilt step splits the run's conversation. */
export interface StepHistory {
  /** The steps so far, oldest first (`stepNumber` 0, 1, ...). */
  readonly steps: Array<StepResult<ToolSet>>;
  /** The messages before the run's first step (the prompt, or the messages the run began with). */
  readonly initialMessages: ModelMessage[];
  /** The messages of the steps so far: each step's answer and the results of its tool calls. */
  readonly responseMessages: ModelMessage[];
}

const NO_USAGE: LanguageModelUsage = {
  inputTokens: undefined,
  inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: undefined, cacheWriteTokens: undefined },
  outputTokens: undefined,
  outputTokenDetails: { textTokens: undefined, reasoningTokens: undefined },
  totalTokens: undefined,
};

/**
 * The steps of a run so far, rebuilt from its conversation for stop conditions and `prepareStep`
 * (the workflow keeps no per-step record, so the history does not grow with it). Each of the last
 * `stepCount` assistant messages starts a step; the tool messages after it are its results.
 *
 * Rebuilt: `stepNumber`, `content` (text, reasoning, tool calls, tool results and errors),
 * `text`, `reasoningText`, `toolCalls`, `toolResults` (and their static/dynamic lists), the
 * results' `output` as the model saw it (the tool's JSON result, or its `toModelOutput`),
 * `finishReason` (`tool-calls` for a step that called tools, else `stop`) and `response.messages`.
 * Not kept: usage (token counts are `undefined`; reading it calls `onUsageRead`), warnings, request
 * and provider metadata.
 */
export function stepHistory(
  messages: readonly JsonMessage[],
  stepCount: number,
  options: {
    /** Called when a condition or `prepareStep` reads a rebuilt step's `usage`, which is not kept. */
    readonly onUsageRead?: () => void;
    /** The agent's `runtimeContext`, as every step of the run had it. */
    readonly runtimeContext?: unknown;
  } = {},
): StepHistory {
  const { onUsageRead = () => undefined, runtimeContext = {} } = options;
  const starts: number[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'assistant') starts.push(index);
  });
  const first = stepCount > 0 ? starts[Math.max(0, starts.length - stepCount)] : undefined;
  const begin = first ?? messages.length;
  const ours = starts.filter((index) => index >= begin);
  const steps = ours.map((start, stepNumber) =>
    rebuiltStep(
      messages.slice(start, ours[stepNumber + 1] ?? messages.length),
      stepNumber,
      onUsageRead,
      runtimeContext,
    ),
  );
  return {
    steps,
    initialMessages: messages.slice(0, begin) as unknown as ModelMessage[],
    responseMessages: messages.slice(begin) as unknown as ModelMessage[],
  };
}

function rebuiltStep(
  messages: readonly JsonMessage[],
  stepNumber: number,
  onUsageRead: () => void,
  runtimeContext: unknown,
): StepResult<ToolSet> {
  const content: Part[] = [];
  const inputs = new Map<string, unknown>();
  for (const message of messages) {
    for (const part of partsOf(message.content)) {
      if (message.role === 'assistant') {
        if (part.type === 'tool-call') inputs.set(String(part['toolCallId']), part['input']);
        content.push(part.type === 'tool-call' ? { ...part, dynamic: false } : part);
      } else if (message.role === 'tool' && part.type === 'tool-result') {
        content.push(resultPart(part, inputs.get(String(part['toolCallId']))));
      }
    }
  }
  const of = (type: string) => content.filter((part) => part.type === type);
  const toolCalls = of('tool-call');
  const toolResults = of('tool-result');
  const text = of('text')
    .map((part) => String(part['text']))
    .join('');
  const reasoning = of('reasoning');
  const step = {
    callId: '',
    stepNumber,
    model: { provider: '', modelId: '' },
    toolsContext: {},
    runtimeContext,
    content,
    text,
    reasoning,
    reasoningText: reasoning.length > 0 ? reasoning.map((part) => String(part['text'])).join('') : undefined,
    files: [],
    sources: [],
    toolCalls,
    staticToolCalls: toolCalls,
    dynamicToolCalls: [],
    toolResults,
    staticToolResults: toolResults,
    dynamicToolResults: [],
    finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop',
    rawFinishReason: undefined,
    // A getter, so that reading what is not kept is said (a token budget would never stop the run).
    get usage() {
      onUsageRead();
      return NO_USAGE;
    },
    performance: {},
    warnings: undefined,
    request: {},
    response: { id: '', timestamp: new Date(0), modelId: '', messages },
    providerMetadata: undefined,
  };
  // A structural rebuild: StepResult's typed tool unions cannot be spelled for a generic ToolSet.
  return step as unknown as StepResult<ToolSet>;
}

function partsOf(content: unknown): Part[] {
  if (typeof content === 'string') return content.length > 0 ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.filter((part): part is Part => typeof part === 'object' && part !== null && 'type' in part);
}

/** A stored tool result as a step's content part: `tool-result` with the output, or `tool-error`. */
function resultPart(part: Part, input: unknown): Part {
  const output = (part['output'] ?? {}) as { type?: string; value?: unknown };
  const common = { toolCallId: part['toolCallId'], toolName: part['toolName'], input, dynamic: false };
  if (output.type === 'error-text' || output.type === 'error-json') {
    return { type: 'tool-error', ...common, error: output.value };
  }
  const value = output.type === 'text' || output.type === 'json' ? output.value : output;
  return { type: 'tool-result', ...common, output: value };
}
