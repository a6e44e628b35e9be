import type { Actor } from './actors.js';
import type { AttemptPlan, RetryPolicy } from './scenario.js';
import type { SimProcess } from './sim-process.js';
import type { Trace } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

/** What an activity run needs from the world: the clock, the trace, and a way to start an attempt on a worker. */
export interface TemporalWorld {
  readonly clock: VirtualClock;
  readonly trace: Trace;
  /**
   * Starts `plan` now on a live worker (`on`, or one picked by `plan.worker` among the live ones);
   * `undefined` when no worker is alive.
   */
  spawn(plan: AttemptPlan, origin: string, on?: SimProcess): Actor | undefined;
}

/**
 * One workflow run's effect-call activity as Temporal drives it, attempt after attempt:
 * - an attempt's signal aborts at its start-to-close timeout, and the next attempt starts a
 *   backoff later, whatever the timed-out one is still doing;
 * - an attempt that throws is retried after the backoff;
 * - a worker that dies, or freezes for longer than the heartbeat timeout, stops heartbeating:
 *   Temporal retries after the heartbeat timeout; a frozen attempt learns it timed out (its signal
 *   aborts) only when it wakes up and heartbeats again;
 * - a cancelled run aborts its running attempt's signal and starts no more.
 * Each attempt is a new {@link Actor}; the run ends when one returns or the attempts run out.
 */
export class ActivityRun {
  private next = 0;
  private cancelled = false;
  private current: Actor | undefined;

  constructor(
    private readonly label: string,
    private readonly plans: readonly AttemptPlan[],
    private readonly policy: RetryPolicy,
    private readonly world: TemporalWorld,
    /** Pins every attempt to this worker (the identical call of a model step runs beside its twin). */
    private readonly on?: () => SimProcess | undefined,
  ) {}

  private pending = false;
  private exhausted = false;

  /**
   * Whether Temporal is done with this activity: an attempt returned, the run was cancelled, or
   * no attempt is left to start (the last one may still be running: that is the attempt's business).
   */
  get finished(): boolean {
    if (this.pending) return false;
    if (this.cancelled || this.exhausted || this.next >= this.plans.length) return true;
    return this.current?.outcome?.kind === 'returned';
  }

  /** Starts the first attempt at virtual time `at`. */
  startAt(at: number): void {
    this.schedule(at, 'first attempt');
  }

  /** The workflow is cancelled: the running attempt's signal aborts, nothing is retried. */
  cancel(): void {
    this.cancelled = true;
    this.world.trace.log('temporal', `${this.label} is cancelled`);
    this.current?.abort('cancelled');
  }

  private schedule(at: number, origin: string): void {
    this.pending = true;
    this.world.clock.at(at, () => {
      this.pending = false;
      this.startNext(origin);
    });
  }

  private startNext(origin: string): void {
    if (this.cancelled) return;
    const plan = this.plans[this.next++];
    if (plan === undefined) {
      this.world.trace.log('temporal', `${this.label}: no attempts left`);
      this.exhausted = true;
      return;
    }
    const actor = this.world.spawn(plan, `${this.label}, ${origin}`, this.on?.());
    if (actor === undefined) {
      this.world.trace.log('temporal', `${this.label}: no live worker for attempt ${plan.attempt}`);
      this.exhausted = true;
      return;
    }
    this.current = actor;
    const { clock } = this.world;
    const { backoffMs, startToCloseMs, heartbeatTimeoutMs } = this.policy;
    let retried = false;
    const retry = (why: string): void => {
      if (retried || this.cancelled) return;
      retried = true;
      this.schedule(clock.now() + backoffMs, `retry after ${why}`);
    };
    clock.at(clock.now() + startToCloseMs, () => {
      if (actor.settled || actor.process.isDead) return;
      actor.abort('start-to-close timeout');
      retry('a start-to-close timeout');
    });
    actor.onSettle((outcome) => {
      if (outcome.kind === 'threw') retry('a failure');
    });
    actor.process.onDeath(() => {
      if (actor.settled) return;
      clock.at(clock.now() + heartbeatTimeoutMs, () => retry('a heartbeat timeout (worker died)'));
    });
    actor.process.onPause((from, to) => {
      if (actor.settled || to - from < heartbeatTimeoutMs) return;
      clock.at(from + heartbeatTimeoutMs, () => {
        if (!actor.settled) retry('a heartbeat timeout (worker frozen)');
      });
      clock.at(to, () => actor.abort('heartbeat timeout, learnt on waking up'));
    });
  }
}
