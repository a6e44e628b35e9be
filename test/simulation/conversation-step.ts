import type { JsonMessage, ModelStepConversation, ModelStepInput, ToolCallInput } from '../../common/index.js';
import { callOptionsFor } from '../../activities/call-conversation.js';
import { stepConversation, type StepConversation } from '../../activities/step-conversation.js';
import type { ToolContext } from '../../src/context/tool-context.js';
import { MockActivityEnvironment } from '@temporalio/testing';
import { chainEntries, conversationRoot } from '../../src/conversation/conversation-entry.js';
import { loadConversation } from '../../src/conversation/load-conversation.js';
import { describe } from './conversation-judge.js';
import { answerOf, type AnswerShape } from './conversation-messages.js';
import type { Execution, SimWorker } from './conversation-execution.js';
import { judgedLoad, type ConvWorld } from './conversation-world.js';

/** How one attempt of a model step goes, drawn by its workflow. */
export interface StepAttemptPlan {
  /** The model step's activity id (the same for all its attempts). */
  readonly activityId: string;
  readonly attempt: number;
  readonly worker: SimWorker;
  /** How long the model call takes, virtual ms (past the start-to-close timeout: a zombie). */
  readonly modelMs: number;
  /** The model's answer: 0 is the one most attempts give. */
  readonly variant: number;
  readonly shape: AnswerShape;
  /** The provider fails the call after the load (a 503): nothing is stored, Temporal retries. */
  readonly providerFails: boolean;
  /** It outlives the start-to-close timeout: Temporal retries without it, and what it stores comes late. */
  readonly zombie: boolean;
  readonly maxSteps: number;
}

/** What an attempt came to. */
export type StepAttemptResult =
  | {
      readonly kind: 'answered';
      readonly conversation: ModelStepConversation;
      readonly response: JsonMessage[];
      readonly closes: boolean;
    }
  | { readonly kind: 'died' | 'retryable' }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * One attempt of the model-step activity as the real one runs it, minus the provider, in an
 * activity context of the execution (Temporal's mock activity environment: the activity id, the
 * attempt, the workflow id and run id the store's execution rows are keyed and ordered by): the
 * real `stepConversation` (the log's load, this worker's cache, else the store), the model call
 * as virtual time, then the real `answer` (the log's append, closing the execution's hold on the
 * run's conversation on a final answer or the step limit, unless a later attempt or step of the
 * execution wrote already). The load and the append are judged.
 */
export function modelStepAttempt(
  world: ConvWorld,
  exec: Execution,
  input: ModelStepInput,
  seen: readonly JsonMessage[],
  storedCount: number,
  plan: StepAttemptPlan,
): Promise<StepAttemptResult> {
  const env = new MockActivityEnvironment({
    activityId: plan.activityId,
    attempt: plan.attempt,
    workflowExecution: exec.temporal,
  });
  return env.run(() => attempt(world, exec, input, seen, storedCount, plan));
}

async function attempt(
  world: ConvWorld,
  exec: Execution,
  input: ModelStepInput,
  seen: readonly JsonMessage[],
  storedCount: number,
  plan: StepAttemptPlan,
): Promise<StepAttemptResult> {
  const { worker } = plan;
  const generation = worker.generation;
  const who = `${exec.id}/s${input.step}/A${plan.attempt}@${worker.name}`;
  const loaded = await judgedLoad<StepConversation>(
    world,
    `${who} (model step)`,
    { runId: exec.runId, head: input.conversation?.head },
    seen,
    exec.chainKeys(storedCount),
    worker.cache,
    () => stepConversation(input, worker.log),
    (c) => c.messages,
  );
  if ('error' in loaded) {
    world.trace.log(who, `load failed: ${describe(loaded.error)}`);
    return { kind: 'failed', error: loaded.error };
  }
  world.trace.log(who, `loaded ${seen.length} messages; model call of ${plan.modelMs} ms`);
  await world.clock.sleep(plan.modelMs);
  if (worker.generation !== generation) {
    world.trace.log(who, 'died with its worker');
    return { kind: 'died' };
  }
  if (plan.providerFails) {
    world.trace.log(who, 'the provider failed (retryable)');
    return { kind: 'retryable' };
  }
  const response = answerOf(seen, 1000 * exec.branch + plan.variant, plan.shape);
  const trailing = response[response.length - 1]?.role === 'tool';
  const end = input.step + 1 >= plan.maxSteps ? 'last' : plan.shape.toolCalls === 0 ? 'answer' : 'open';
  const closes = end === 'last' || (end === 'answer' && !trailing);
  const written = chainEntries(exec.chainKeys(storedCount).at(-1) ?? conversationRoot(exec.runId), [
    ...seen.slice(storedCount),
    ...(trailing ? response.slice(0, -1) : response),
  ]).map((e) => e.key);
  try {
    const conversation = await loaded.value.answer(response, end);
    if (conversation === undefined) throw new Error('the step answered without a conversation reference');
    world.trace.log(
      who,
      `appended (head ${conversation.head.slice(0, 8)})${closes ? ', closing the conversation' : ''}`,
    );
    if (closes && plan.zombie) world.zombieCloses.set(exec.id, world.clock.now());
    return { kind: 'answered', conversation, response, closes };
  } catch (error) {
    world.trace.log(who, `append failed: ${describe(error)}`);
    world.judge.append(`${who} (model step)`, written, error);
    return { kind: 'failed', error };
  }
}

/** A tool call's activity reading `options.messages` (the real `callOptionsFor`), judged against what the model saw. */
export async function toolCallRead(
  world: ConvWorld,
  exec: Execution,
  worker: SimWorker,
  call: { readonly toolCallId: string; readonly toolName: string },
  prompt: ModelStepConversation['prompt'],
  seen: readonly JsonMessage[],
): Promise<void> {
  const input: ToolCallInput = {
    agent: 'sim',
    runId: exec.runId,
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    input: {},
    conversation: prompt,
  };
  const ctx = { run: { runId: exec.runId, signal: new AbortController().signal } } as unknown as ToolContext;
  await judgedLoad(
    world,
    `${exec.id}/tool ${call.toolCallId}@${worker.name}`,
    { runId: exec.runId, head: prompt.head },
    seen,
    exec.chainKeys(seen.length),
    worker.cache,
    () => callOptionsFor(input, ctx, worker.log),
    (options) => options.messages,
  );
}

/** The client's `loadConversation` of the execution's conversation (a fresh log: no cache), judged. */
export async function clientRead(world: ConvWorld, exec: Execution, why: string): Promise<void> {
  const full = [...exec.full];
  const storedCount = full.length - exec.pendingCount;
  const source = { runId: exec.runId, ...exec.snapshot() };
  const head = 'conversation' in source ? source.conversation.head : undefined;
  await judgedLoad(
    world,
    `client read of ${exec.id} (${why})`,
    { runId: exec.runId, head },
    full,
    exec.chainKeys(storedCount),
    undefined,
    () => loadConversation(world.backend.store, source),
    (messages) => messages,
  );
}
