import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { AgentEntry } from '../activities/agent-registry.js';
import type { IEffectStore } from '../src/stores/effect-store.js';
import { createAgentWorker } from '../worker/create-agent-worker.js';
import { startAgentRun, type StartAgentRunOptions } from '../client/start-agent-run.js';
import type { AgentRunOutput } from '../workflows/agent-loop.js';
import type { RunEffectReport } from '../common/index.js';
import { conversationStoreOf } from '../activities/conversation-store-of.js';
import { loadConversation } from '../src/conversation/load-conversation.js';
import type { FaultInjector } from './fault-injector.js';
import { createTimeSkippingEnvironment } from './test-environment.js';

/** One activity of a run, as its history tells it. @public */
export interface ActivitySummary {
  /** `chamvi.modelStep`, `chamvi.effectCall`, `chamvi.toolCall`, `chamvi.recordEffect`, ... */
  readonly type: string;
  /** The attempt that ended it (1 = no retry). */
  readonly attempt: number;
  /** How it ended, or `running`. */
  readonly status: 'completed' | 'failed' | 'timed-out' | 'canceled' | 'running';
  /** The last failure's message (failed activities). */
  readonly failure?: string;
}

/** What {@link runAgentUnderTest} returns. @public */
export interface AgentTestRun {
  /** The run's output (text, steps, effect report, the conversation's reference). */
  readonly output: AgentRunOutput;
  /** The run's conversation, oldest message first, read from the store its workers kept it in. */
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>;
  /** Shortcut to `output.effects`: one entry per effect call (key, tool, outcome, attempts, recordPending). */
  readonly effects: RunEffectReport[];
  /** Every activity of the run, in order. */
  readonly activities: ActivitySummary[];
  /** How many activities of each type ran. */
  readonly counts: Record<string, number>;
  /** The run's workflow handle (its history, queries). */
  readonly handle: WorkflowHandle;
}

/** What {@link runAgentUnderTest} takes. @public */
export interface RunAgentUnderTestOptions {
  /** Agents the worker(s) run (with their Temporal settings, e.g. short retry intervals). */
  readonly agents: readonly AgentEntry[];
  /** The effect store; with `workers > 1`, a function giving each worker its own store instance. */
  readonly store: IEffectStore | ((worker: number) => IEffectStore);
  /** Prompt of the run. */
  readonly prompt: string;
  /** Agent to run; default the first agent's name. */
  readonly agent?: string;
  /** Faults to inject in the effect calls: the agents' tools and the store(s) are wrapped by it. */
  readonly faults?: FaultInjector;
  /** A time-skipping (or dev server) environment to reuse; default: one is created and torn down. */
  readonly env?: TestWorkflowEnvironment;
  /** A prebuilt workflow bundle (`bundleWorkflowCode`); saves the bundling (seconds) per run. */
  readonly workflowBundle?: WorkflowBundle;
  /** Workers polling the task queue, each with its own store from `store(i)`. Default 1. */
  readonly workers?: number;
  /** Anything else for `startAgentRun` (state, trigger, maxSteps, workflowId, ...). */
  readonly run?: Partial<Omit<StartAgentRunOptions, 'agent' | 'prompt' | 'taskQueue'>>;
}

/**
 * Runs one agent as a Temporal workflow on worker(s) created for the occasion, and returns its
 * output with the effect report and a summary of its activities, for tests of effect tools:
 *
 * ```ts
 * const faults = new FaultInjector({ point: 'after-effect', attempt: 1 });
 * const { effects } = await runAgentUnderTest({ agents: [agent], store, prompt: 'go', faults });
 * expect(effects).toEqual([expect.objectContaining({ outcome: 'reconciled', attempts: 2 })]);
 * ```
 * @public
 */
export async function runAgentUnderTest(options: RunAgentUnderTestOptions): Promise<AgentTestRun> {
  const env = options.env ?? (await createTimeSkippingEnvironment());
  try {
    const taskQueue = `test-${randomUUID()}`;
    const { faults } = options;
    const agents = faults === undefined ? options.agents : faults.wrapAgents(options.agents);
    const storeOf = (i: number): IEffectStore => {
      const store = typeof options.store === 'function' ? options.store(i) : options.store;
      return faults === undefined ? store : faults.wrapStore(store);
    };
    const count = Math.max(1, options.workers ?? 1);
    // Made once: the conversation is read back from the store worker 0 was given.
    const stores = Array.from({ length: count }, (_, i) => storeOf(i));
    const workers = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        createAgentWorker({
          connection: env.nativeConnection,
          ...(env.namespace !== undefined ? { namespace: env.namespace } : {}),
          taskQueue,
          agents,
          store: stores[i] as IEffectStore,
          // A store that fails (FlakyEffectStore) is what some runs under test are about.
          checkStore: false,
          workerOptions: options.workflowBundle !== undefined ? { workflowBundle: options.workflowBundle } : {},
        }),
      ),
    );
    const agent = options.agent ?? agentName(options.agents[0]);
    const body = async (): Promise<AgentTestRun> => {
      const handle = await startAgentRun(env.client, { ...options.run, agent, prompt: options.prompt, taskQueue });
      const output = await handle.result();
      const activities = await summarizeActivities(handle);
      const counts: Record<string, number> = {};
      for (const a of activities) counts[a.type] = (counts[a.type] ?? 0) + 1;
      const messages = await loadConversation(conversationStoreOf({ store: stores[0] as IEffectStore }).store, output);
      return { output, messages, effects: output.effects, activities, counts, handle };
    };
    return await runAll(workers, body);
  } finally {
    if (options.env === undefined) await env.teardown();
  }
}

/** Runs `body` while every worker runs; the workers stop when it settles. */
export async function runAll<T>(
  workers: ReadonlyArray<{ runUntil<R>(p: Promise<R> | (() => Promise<R>)): Promise<R> }>,
  body: () => Promise<T>,
): Promise<T> {
  const [first, ...rest] = workers;
  if (first === undefined) return body();
  return first.runUntil(() => runAll(rest, body));
}

/** The activities of a workflow, in order, with the attempt that ended each and how. */
export async function summarizeActivities(handle: WorkflowHandle): Promise<ActivitySummary[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const byScheduled = new Map<
    string,
    { type: string; attempt: number; status: ActivitySummary['status']; failure?: string }
  >();
  for (const e of events) {
    const id = String(e.eventId);
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) byScheduled.set(id, { type: scheduled.activityType?.name ?? '?', attempt: 1, status: 'running' });
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const a = byScheduled.get(String(started.scheduledEventId));
      if (a) a.attempt = started.attempt ?? 1;
    }
    const done =
      (e.activityTaskCompletedEventAttributes && {
        s: 'completed' as const,
        a: e.activityTaskCompletedEventAttributes,
      }) ||
      (e.activityTaskFailedEventAttributes && { s: 'failed' as const, a: e.activityTaskFailedEventAttributes }) ||
      (e.activityTaskTimedOutEventAttributes && {
        s: 'timed-out' as const,
        a: e.activityTaskTimedOutEventAttributes,
      }) ||
      (e.activityTaskCanceledEventAttributes && { s: 'canceled' as const, a: e.activityTaskCanceledEventAttributes });
    if (done) {
      const a = byScheduled.get(String(done.a.scheduledEventId));
      if (a) {
        a.status = done.s;
        const failure = (done.a as { failure?: { message?: string | null } | null }).failure?.message;
        if (failure) a.failure = failure;
      }
    }
  }
  return [...byScheduled.values()];
}

function agentName(entry: AgentEntry | undefined): string {
  if (entry === undefined) throw new TypeError('runAgentUnderTest: give at least one agent.');
  return 'agent' in entry && typeof entry.agent === 'object' ? entry.agent.name : (entry as { name: string }).name;
}
