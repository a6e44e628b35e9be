import type { Trace } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

/** Thrown into every parked operation when a history is torn down (never seen by an invariant). */
export class TeardownSignal extends Error {
  constructor() {
    super('simulation torn down');
    this.name = 'TeardownSignal';
  }
}

/** A crash at the process's n-th network operation (1-based): before it is sent, or right after it arrived. */
export interface OperationCrash {
  readonly nth: number;
  readonly phase: 'send' | 'arrive';
}

/**
 * A simulated OS process (a worker): what the network layer consults before a message leaves it
 * or reaches it. All simulated processes share one JavaScript heap, so death and pauses are
 * modelled at the process's boundary, which is where the rest of the world can observe them:
 *
 * - **dead**: nothing it sent that has not arrived yet arrives, nothing it sends leaves, no answer
 *   reaches it. Its calls never settle (until teardown), its timers keep firing into the void.
 * - **paused** (SIGSTOP, a VM freeze, a long GC pause): nothing leaves it and no answer reaches it
 *   until the pause ends; messages already on the wire still arrive. Its lease renewals therefore
 *   reach the store only after the pause.
 */
export class SimProcess {
  private dead = false;
  private pausedUntil = 0;
  private readonly pauses: { from: number; to: number }[] = [];
  private readonly parked = new Set<(error: Error) => void>();
  private operations = 0;
  private tornDown = false;
  /** Virtual time of death, if it died. */
  diedAt: number | undefined;
  private readonly deathListeners: (() => void)[] = [];
  private readonly pauseListeners: ((from: number, to: number) => void)[] = [];

  constructor(
    readonly name: string,
    private readonly clock: VirtualClock,
    private readonly trace: Trace,
    private readonly crash?: OperationCrash,
  ) {}

  get isDead(): boolean {
    return this.dead;
  }

  /** Whether the process is frozen at virtual time `at`. */
  pausedAt(at: number): boolean {
    return this.pauses.some((p) => p.from <= at && at < p.to);
  }

  /** Every pause, as `[from, to)` in virtual ms. */
  pauseIntervals(): readonly { from: number; to: number }[] {
    return this.pauses;
  }

  /** Kills the process now (SIGKILL). */
  kill(why: string): void {
    if (this.dead) return;
    this.dead = true;
    this.diedAt = this.clock.now();
    this.trace.log(this.name, `process dies (${why})`);
    for (const listener of this.deathListeners) listener();
  }

  /** Calls `listener` when the process dies. */
  onDeath(listener: () => void): void {
    this.deathListeners.push(listener);
  }

  /** Calls `listener` with the pause's `[from, to)` whenever the process is paused. */
  onPause(listener: (from: number, to: number) => void): void {
    this.pauseListeners.push(listener);
  }

  /** Freezes the process for `durationMs` from now. */
  pause(durationMs: number): void {
    if (this.dead) return;
    const from = this.clock.now();
    const to = Math.max(this.pausedUntil, from + durationMs);
    this.pausedUntil = to;
    this.pauses.push({ from, to });
    this.trace.log(this.name, `process paused for ${durationMs} ms (until ${to} ms)`);
    for (const listener of this.pauseListeners) listener(from, to);
  }

  /**
   * Counts one outgoing network operation and applies an operation crash planned for it.
   * @returns false when the process is dead (the operation must not leave).
   */
  beginOperation(label: string): boolean {
    if (this.dead) return false;
    this.operations++;
    if (this.crash?.nth === this.operations && this.crash.phase === 'send') this.kill(`crash before sending ${label}`);
    return !this.dead;
  }

  /** Applies an operation crash planned right after the current operation arrived. */
  afterArrival(label: string): void {
    if (this.crash?.nth === this.operations && this.crash.phase === 'arrive') this.kill(`crash after ${label} arrived`);
  }

  /**
   * Resolves once the process can act (send, or take an answer): at once when running, after the
   * pause when frozen, never when dead.
   */
  async whenRunning(): Promise<void> {
    for (;;) {
      if (this.dead) return this.park();
      const wait = this.pausedUntil - this.clock.now();
      if (wait <= 0) return;
      await this.clock.sleep(wait);
    }
  }

  /** A promise that settles only at teardown (rejecting): an operation lost with its process. */
  park<T>(): Promise<T> {
    if (this.tornDown) return Promise.reject(new TeardownSignal());
    return new Promise<T>((_, reject) => {
      this.parked.add(reject);
    });
  }

  /** Ends the history for this process: every parked operation rejects, and later ones at once. */
  teardown(): void {
    this.tornDown = true;
    for (const reject of this.parked) reject(new TeardownSignal());
    this.parked.clear();
  }
}
