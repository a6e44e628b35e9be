import { z } from 'zod';
import { createToolContext } from '../../src/context/tool-context.js';
import { defineEffectTool } from '../../src/effects/define-effect-tool.js';
import {
  applyEffect,
  type EffectCall,
  type EffectEnv,
  type EffectResolution,
} from '../../src/effects/effect-protocol.js';
import type { EffectLogger } from '../../src/effects/effect-report.js';
import type { Network } from './network.js';
import type { Remote, RemoteCall, RemoteResult } from './remotes.js';
import type { AttemptPlan, Scenario } from './scenario.js';
import type { SimProcess } from './sim-process.js';
import type { SimStoreConnection } from './store-connection.js';
import type { Trace } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

/** How an attempt's effect call ended. */
export type ActorOutcome =
  | { readonly kind: 'returned'; readonly at: number; readonly resolution: EffectResolution }
  | { readonly kind: 'threw'; readonly at: number; readonly error: unknown };

/** `effectFenceOf` of the protocol under test, when it has one (feature-detected at load). */
export type FenceOf = (options: object) => number | undefined;

/** The one effect every attempt of a history calls: answer issue 7, once per run. */
const INPUT = { issue: 7 };
const inputSchema = z.object({ issue: z.number() });
/** The history's effect key (the tool's `effectKey`). */
export const EFFECT_KEY = 'run-1:answer:7';

/** What the world needs to run an attempt. */
export interface ActorWorld {
  readonly scenario: Scenario;
  readonly clock: VirtualClock;
  readonly trace: Trace;
  readonly network: Network;
  readonly remote: Remote;
  readonly fenceOf: FenceOf | undefined;
}

/**
 * One attempt of the effect call (a Temporal activity attempt): the real `applyEffect` with its
 * own owner token, attempt number and abort signal, on its process's store connection, with an
 * effect tool whose hooks talk to the history's remote through the process's network link.
 *
 * Records what the invariants need: when it started and settled, when its hooks ran, when its
 * signal aborted, what it logged.
 */
export class Actor {
  readonly name: string;
  readonly owner: string;
  private readonly controller = new AbortController();
  outcome: ActorOutcome | undefined;
  started = false;
  startedAt: number | undefined;
  abortedAt: number | undefined;
  /** When `alreadyApplied` returned (it ran, and answered "not applied" or a result). */
  checkedAt: number | undefined;
  executeStartedAt: number | undefined;
  executeEndedAt: number | undefined;
  readonly warnings: { readonly at: number; readonly message: string }[] = [];
  private hung: ((error: Error) => void) | undefined;
  private readonly settleListeners: ((outcome: ActorOutcome) => void)[] = [];

  constructor(
    readonly plan: AttemptPlan,
    /** Why Temporal runs it (first attempt, a retry after a timeout, ...), for the trace. */
    readonly origin: string,
    readonly process: SimProcess,
    private readonly connection: SimStoreConnection,
    private readonly world: ActorWorld,
  ) {
    this.name = plan.name;
    this.owner = `owner-${plan.name}`;
  }

  /** Whether its call has settled (returned or thrown). */
  get settled(): boolean {
    return this.outcome !== undefined;
  }

  /** Starts the effect call now, unless its process is dead. */
  start(): void {
    const { trace, scenario } = this.world;
    if (this.process.isDead) {
      trace.log(this.who, 'never starts: its process is dead');
      return;
    }
    this.started = true;
    this.startedAt = this.world.clock.now();
    trace.log(this.who, `calls the effect tool (attempt ${this.plan.attempt}, ${this.origin})`);
    const logger: EffectLogger = {
      warn: (message) => {
        this.warnings.push({ at: this.world.clock.now(), message });
        trace.log(this.who, `warns: ${message}`);
      },
    };
    // abortGraceMs is the protocol's cap for an execute that outlives its aborted attempt; a
    // protocol without it ignores the field.
    const env: EffectEnv & { abortGraceMs: number } = {
      store: this.connection,
      logger,
      attempt: this.plan.attempt,
      owner: this.owner,
      leaseMs: scenario.leaseMs,
      busyWaitMs: scenario.busyWaitMs,
      abortGraceMs: scenario.abortGraceMs,
    };
    applyEffect(this.call(), env).then(
      (resolution) => this.settle({ kind: 'returned', at: this.world.clock.now(), resolution }),
      (error: unknown) => this.settle({ kind: 'threw', at: this.world.clock.now(), error }),
    );
  }

  /** Calls `listener` once the call settles. */
  onSettle(listener: (outcome: ActorOutcome) => void): void {
    this.settleListeners.push(listener);
  }

  /** Fires its abort signal (a cancellation, a timeout). */
  abort(why: string): void {
    if (this.outcome !== undefined || this.controller.signal.aborted) return;
    this.abortedAt = this.world.clock.now();
    this.world.trace.log(this.who, `signal aborts (${why})`);
    this.controller.abort(new Error(`attempt ${this.plan.attempt} ${why}`));
  }

  /** Ends the history: a hung execute finally throws, so its call can settle. */
  teardown(): void {
    this.controller.abort(new Error('teardown'));
    this.hung?.(new Error('teardown'));
  }

  /** `P1/A2`. */
  get who(): string {
    return `${this.process.name}/${this.name}`;
  }

  private settle(outcome: ActorOutcome): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    // A dead process's calls settle only at teardown: nobody sees that.
    if (this.process.isDead) return;
    for (const listener of this.settleListeners) listener(outcome);
    this.world.trace.log(
      this.who,
      outcome.kind === 'returned'
        ? `call returns ${JSON.stringify(outcome.resolution.result)} (${outcome.resolution.report.outcome}${outcome.resolution.report.recordPending ? ', record pending' : ''})`
        : `call throws ${describeError(outcome.error)}`,
    );
  }

  private call(): EffectCall {
    const ctx = createToolContext({ runId: 'run-1', agent: 'responder', signal: this.controller.signal });
    const { remote } = this.world;
    const check = remote.check;
    const tool = defineEffectTool({
      description: 'Answers the issue.',
      inputSchema,
      effectKey: ({ issue }, c) => `${c.run.runId}:answer:${issue}`,
      ...(check === undefined
        ? {}
        : {
            alreadyApplied: async (key: string): Promise<RemoteResult | undefined> => {
              await this.world.clock.sleep(this.plan.alreadyApplied.delayMs);
              if (this.plan.alreadyApplied.fails) throw new Error('remote answered 503 to the check');
              const found = await check(this.remoteCall, key);
              await this.world.clock.sleep(this.plan.alreadyApplied.afterMs);
              this.checkedAt = this.world.clock.now();
              return found;
            },
          }),
      execute: async (_input, options): Promise<RemoteResult> => {
        this.executeStartedAt = this.world.clock.now();
        this.world.trace.log(this.who, 'execute starts');
        try {
          return await this.execute(options);
        } finally {
          this.executeEndedAt = this.world.clock.now();
        }
      },
    });
    return {
      tool: tool as EffectCall['tool'],
      toolName: 'answer',
      input: INPUT,
      ctx,
      options: { toolCallId: `call-${this.name}`, messages: [], context: ctx },
    };
  }

  private async execute(options: object): Promise<RemoteResult> {
    const plan = this.plan.execute;
    const signal = this.controller.signal;
    if (plan.hangs) {
      await new Promise<never>((_, reject) => {
        this.hung = reject;
        if (plan.honoursSignal) signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      });
    }
    await this.delay(plan.delayMs, plan.honoursSignal ? signal : undefined);
    if (plan.honoursSignal) signal.throwIfAborted();
    if (plan.fails) throw new Error('remote answered 503');
    const fence = this.world.fenceOf?.(options);
    const result = await this.world.remote.apply(this.remoteCall, EFFECT_KEY, this.name, fence);
    await this.world.clock.sleep(plan.afterMs);
    return result;
  }

  /** A request to the remote from this attempt's process. */
  private readonly remoteCall: RemoteCall = (label, apply, describe) =>
    this.world.network.call(this.process, this.who, `remote.${label}`, apply, 'none', {}, describe);

  private delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal === undefined) return this.world.clock.sleep(ms);
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** An error as one short line: its name and message. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
