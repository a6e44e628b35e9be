import { Context } from '@temporalio/activity';
import { generateText, streamText, type ToolSet } from 'ai';
import type { RunStreamStore } from '../src/stream/run-stream-store.js';
import { RunStreamWriter } from '../src/stream/run-stream-writer.js';
import { toolResultParts } from '../src/stream/tool-result-parts.js';
import type { JsonMessage } from '../common/index.js';

/** The settings of the step's model call: what `generateText` would get. */
type CallSettings = Parameters<typeof streamText<ToolSet>>[0];

/** What the model step reads of the call's result, the same whether it streamed or not. */
export interface ModelCallOutcome {
  readonly text: string;
  readonly finishReason: string;
  readonly toolCalls: ReadonlyArray<{ toolCallId: string; toolName: string; input: unknown; invalid?: boolean }>;
  readonly response: { readonly messages: unknown[]; readonly modelId?: string };
  /** What the call used, as the provider reported it. */
  readonly usage: { readonly inputTokens: number | undefined; readonly outputTokens: number | undefined };
  /** The structured output (`output` setting): read only when the agent has one (a promise when streamed). */
  readonly output: unknown;
}

/** The step a streamed model call writes for (the step's input has these fields). */
type StreamStepRef = {
  readonly runId: string;
  readonly step: number;
  readonly firstExecutionRunId?: string;
  /** The step's conversation reference: its pending messages hold the previous step's tool results. */
  readonly conversation?: { readonly pending: readonly JsonMessage[] };
};

/**
 * The step's model call: `generateText` without a stream (as before streaming existed), else
 * {@link streamModelCall}. Same settings, same outcome.
 */
export async function callModel(
  settings: CallSettings,
  stream: RunStreamStore | undefined,
  ref: StreamStepRef,
): Promise<ModelCallOutcome> {
  if (stream !== undefined) return streamModelCall(settings, stream, ref);
  const result = await generateText(settings as Parameters<typeof generateText<ToolSet>>[0]);
  return {
    text: result.text,
    finishReason: result.finishReason,
    toolCalls: result.toolCalls,
    response: result.response,
    usage: result.usage,
    // A getter, read on demand: generateText's own throws when the agent has no output.
    get output() {
      return result.output;
    },
  };
}

/**
 * The model call of a step with `streamText`, writing the tool results its input carries (the
 * previous step's calls), then its text, reasoning and tool-call deltas to the run stream as they arrive (under this activity's attempt, so a retry's text replaces the
 * failed attempt's), and returning what `generateText` would have: the step's result is the same
 * with or without a stream, and the stream adds at most `STREAM_CLOSE_BUDGET_MS` (500 ms) to the
 * step (what the store has not taken by then is dropped, with one warning in the activity's log).
 * A provider error in the stream is thrown as it came (the caller maps it as it maps
 * `generateText`'s); an aborted call throws the signal's reason.
 */
export async function streamModelCall(
  settings: CallSettings,
  store: RunStreamStore,
  ref: StreamStepRef,
): Promise<ModelCallOutcome> {
  const context = Context.current();
  const writer = new RunStreamWriter(
    store,
    // Named one by one: `ref` is the step's input (with its conversation), which no batch should carry.
    {
      runId: ref.runId,
      workflowId: context.info.workflowExecution?.workflowId ?? '',
      // Absent: the run id is the first execution run id.
      firstExecutionRunId: ref.firstExecutionRunId ?? ref.runId,
      step: ref.step,
      attempt: context.info.attempt,
      execution: context.info.workflowExecution?.runId ?? '',
    },
    (message, meta) => {
      context.log.warn(message, { parts: meta.parts });
    },
  );
  // The previous step's tool results first: the page sees each call end before this step's text,
  // and a reader that replays the stream later sees them too (they are in no model step's deltas).
  for (const part of toolResultParts(ref.conversation?.pending ?? [])) writer.push(part);
  // streamText reports a provider error as an `error` part; kept here to be thrown as generateText would.
  let failure: { error: unknown } | undefined;
  const result = streamText({ ...settings, onError: () => undefined });
  try {
    for await (const part of result.fullStream) {
      switch (part.type) {
        case 'text-delta':
          writer.push({ type: 'text-delta', id: part.id, delta: part.text });
          break;
        case 'reasoning-delta':
          writer.push({ type: 'reasoning-delta', id: part.id, delta: part.text });
          break;
        case 'tool-input-start':
          writer.push({ type: 'tool-input-start', toolCallId: part.id, toolName: part.toolName });
          break;
        case 'tool-input-delta':
          writer.push({ type: 'tool-input-delta', toolCallId: part.id, delta: part.delta });
          break;
        case 'tool-call':
          writer.push({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
          break;
        case 'error':
          failure ??= { error: part.error };
          break;
        default:
          break;
      }
    }
    if (failure !== undefined) throw failure.error;
    settings.abortSignal?.throwIfAborted();
    const [text, finishReason, toolCalls, response, usage] = await Promise.all([
      result.text,
      result.finishReason,
      result.toolCalls,
      result.response,
      result.usage,
    ]);
    writer.push({ type: 'step-end', finishReason });
    return {
      text,
      finishReason,
      toolCalls,
      response: response,
      usage,
      get output() {
        return result.output;
      },
    };
  } finally {
    await writer.close();
  }
}
