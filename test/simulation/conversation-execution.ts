import type { JsonMessage, ModelStepConversation, ModelStepInput } from '../../common/index.js';
import { ConversationCache } from '../../src/conversation/conversation-cache.js';
import { chainEntries, conversationRoot } from '../../src/conversation/conversation-entry.js';
import { ConversationLog } from '../../src/conversation/conversation-log.js';
import type { ConversationStore } from '../../src/stores/conversation-store.js';
import { ConversationState } from '../../workflows/conversation-state.js';
import { withToolResults } from './conversation-messages.js';
import type { ConvWorkerPlan } from './conversation-scenario.js';

/** A copy of a JSON value (cheaper than structuredClone for the small snapshots taken every step). */
function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A worker process: a `ConversationLog` over the shared store, with its own cache, lost on a restart. */
export class SimWorker {
  generation = 0;
  cache!: ConversationCache;
  log!: ConversationLog;

  constructor(
    readonly plan: ConvWorkerPlan,
    private readonly store: ConversationStore,
  ) {
    this.restart();
  }

  get name(): string {
    return this.plan.name;
  }

  /** A new process: nothing cached, and the attempts of the old one are dead. */
  restart(): void {
    this.generation++;
    this.cache = new ConversationCache(this.plan.cacheBytes);
    this.log = new ConversationLog(this.store, this.cache);
  }
}

/** Where an execution stood before one of its steps: what a reset to that step starts from. */
interface Checkpoint {
  readonly snapshot: ReturnType<ConversationState['snapshot']>;
  readonly full: readonly JsonMessage[];
  readonly pendingCount: number;
  readonly activities: number;
}

/**
 * One workflow execution under a run id, as the workflow holds its conversation: the real
 * `ConversationState` (what the next model step's input says), and beside it the simulator's
 * own account of the conversation (`full`: every message the run's steps and tools produced, of
 * which the last `pendingCount` are not stored yet), which loads are compared with.
 */
export class Execution {
  status: 'running' | 'closed' | 'failed' | 'terminated' | 'continued' = 'running';
  /** The store has a write of this execution (from its taken attempts). */
  written = false;
  step: number;
  private readonly checkpoints = new Map<number, Checkpoint>();
  /** Keys of the chain of the first messages of `full`, as far as computed. */
  private readonly keys: string[] = [];
  /** The Temporal run id of the execution this one continues (continue-as-new), told on its first step. */
  continuedFrom: string | undefined;
  private readonly startStep: number;

  constructor(
    readonly id: string,
    readonly runId: string,
    /** Salt of the model's answers: a reset branch may answer differently. */
    readonly branch: number,
    private state: ConversationState,
    public full: JsonMessage[],
    public pendingCount: number,
    startStep: number,
    /** Activities it scheduled so far (a reset's execution replays its base's up to the reset point). */
    private activities = 0,
  ) {
    this.step = startStep;
    this.startStep = startStep;
  }

  /** Schedules an activity: its id, as the workflow SDK numbers them (1, 2, 3… per execution). */
  scheduleActivity(): string {
    return String(++this.activities);
  }

  /** Its Temporal workflow id and run id (`W1/E2` is run `E2` of workflow `W1`). */
  get temporal(): { readonly workflowId: string; readonly runId: string } {
    const [workflowId = this.id, runId = this.id] = this.id.split('/');
    return { workflowId, runId };
  }

  /** A new run's first execution: the prompt is pending. */
  static start(id: string, runId: string, prompt: JsonMessage): Execution {
    return new Execution(id, runId, 0, new ConversationState({ pending: [prompt] }), [prompt], 1, 0);
  }

  /** The messages stored (the conversation up to its head). */
  get stored(): JsonMessage[] {
    return this.full.slice(0, this.full.length - this.pendingCount);
  }

  /**
   * The keys of the genuine chain of the first `count` messages (stored messages never change:
   * the stored part of `full` only grows, so the keys are computed once).
   */
  chainKeys(count: number): string[] {
    if (this.keys.length < count) {
      const parent = this.keys.at(-1) ?? conversationRoot(this.runId);
      for (const entry of chainEntries(parent, this.full.slice(this.keys.length, count))) this.keys.push(entry.key);
    }
    return this.keys.slice(0, count);
  }

  /** Whether the store must keep its entries: it runs and wrote. */
  get open(): boolean {
    return this.status === 'running' && this.written;
  }

  /** The model step's input for the current step (remembered as the checkpoint of a reset to it). */
  stepInput(): ModelStepInput {
    this.checkpoints.set(this.step, {
      // A copy: the state adds tool results to its pending message in place.
      snapshot: jsonCopy(this.state.snapshot()),
      full: [...this.full],
      pendingCount: this.pendingCount,
      activities: this.activities,
    });
    // As the agent loop does: its first step tells the store which execution it continues.
    const continued = this.step === this.startStep && this.continuedFrom !== undefined;
    return {
      agent: 'sim',
      runId: this.runId,
      step: this.step,
      ...this.state.snapshot(),
      ...(continued ? { continuedFrom: this.continuedFrom } : {}),
    };
  }

  /** Takes in the taken attempt's answer. */
  answered(conversation: ModelStepConversation, response: readonly JsonMessage[]): void {
    this.state.answered({ conversation, text: '', finishReason: 'stop', toolCalls: [] });
    this.full = [...this.full, ...response];
    this.pendingCount = response[response.length - 1]?.role === 'tool' ? 1 : 0;
    this.written = true;
  }

  addToolResults(results: ReadonlyArray<{ toolCallId: string; toolName: string; output: unknown }>): void {
    if (results.length === 0) return;
    this.state.addToolResults(results);
    this.full = withToolResults(this.full, results);
    this.pendingCount = 1;
  }

  /** The conversation fields of a checkpoint, the progress query and the run's output (a copy). */
  snapshot(): ReturnType<ConversationState['snapshot']> {
    return jsonCopy(this.state.snapshot());
  }

  /** The steps a reset can go back to (those that began). */
  resetPoints(): number[] {
    return [...this.checkpoints.keys()];
  }

  /** The execution that continues this one from `step`'s checkpoint (a reset) or from now (continue-as-new). */
  fork(id: string, branch: number, step?: number): Execution {
    const at = step === undefined ? undefined : this.checkpoints.get(step);
    const snapshot = jsonCopy(at?.snapshot ?? this.state.snapshot());
    return new Execution(
      id,
      this.runId,
      branch,
      new ConversationState(snapshot.conversation),
      [...(at?.full ?? this.full)],
      at?.pendingCount ?? this.pendingCount,
      step ?? this.step,
      // Continue-as-new starts a new workflow (its activities from 1); a reset replays its base's.
      at?.activities ?? 0,
    );
  }
}
