import { withGlobal, type Clock } from '@sinonjs/fake-timers';

/** The wall clock (`Date.now()`) at virtual time 0 of every history. */
export const WALL_EPOCH = Date.UTC(2030, 0, 1);

// Captured before any clock is installed: the one real macrotask the driver uses to let every
// pending promise callback run between two timers.
const realSetImmediate = globalThis.setImmediate;

/**
 * Virtual time for one history. While installed, `Date`, `setTimeout`/`setInterval` (and their
 * `clear*`), `performance.now` (also through `node:perf_hooks`) and `process.hrtime` belong to
 * this clock; promises and `queueMicrotask` stay real, so the code under test runs unchanged and
 * only time is simulated. Nothing advances by itself: {@link run} fires timers one at a time, in
 * order of due time (ties in order of creation), and lets all promise callbacks settle after each,
 * so one seed gives one exact interleaving.
 *
 * Two clocks are derived from it:
 * - the **monotonic** clock ({@link now}, `performance.now()`), shared by every simulated process;
 * - the **wall** clock (`Date.now()`), which {@link stepWall} moves back or forward as NTP or an
 *   operator would. A step moves `Date.now()` only: `performance.now()` and the due time of every
 *   pending timer stay put (fake-timers' `setSystemTime` semantics).
 *
 * The store's clock ({@link storeNow}) is the database server's: derived from the monotonic clock,
 * it never steps.
 */
export class VirtualClock {
  private readonly clock: Clock;
  private uninstalled = false;

  constructor() {
    this.clock = withGlobal(globalThis).install({
      now: WALL_EPOCH,
      toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'hrtime'],
      loopLimit: 1_000_000,
    });
  }

  /** Virtual milliseconds since the history began (the monotonic clock). */
  now(): number {
    return performance.now();
  }

  /** The database server's clock, in epoch ms: starts at {@link WALL_EPOCH} and never steps. */
  storeNow(): number {
    return WALL_EPOCH + this.now();
  }

  /** How far the wall clock is from true time, in ms (after steps). */
  wallOffset(): number {
    return Date.now() - this.storeNow();
  }

  /** Steps the wall clock by `deltaMs` (negative: back). */
  stepWall(deltaMs: number): void {
    this.clock.setSystemTime(Date.now() + deltaMs);
  }

  /** Runs `action` at virtual time `at` (now, if that has passed). */
  at(at: number, action: () => void): void {
    setTimeout(action, Math.max(0, at - this.now()));
  }

  /** Resolves after `ms` virtual milliseconds. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
  }

  /**
   * Fires timers in order until `done()` holds, nothing is scheduled any more, or virtual time
   * would pass `horizon`. Every promise callback a timer causes runs before the next timer fires.
   */
  async run(horizon: number, done: () => boolean = () => false): Promise<void> {
    let reached = false;
    const sentinel = setTimeout(
      () => {
        reached = true;
      },
      Math.max(0, horizon - this.now()),
    );
    await settle();
    while (!reached && !done() && this.clock.countTimers() > 0) await this.clock.nextAsync();
    clearTimeout(sentinel);
  }

  /** Fires timers until none is left or virtual time passes `horizon`. */
  async drain(horizon: number): Promise<void> {
    await settle();
    while (this.clock.countTimers() > 0 && this.now() <= horizon) await this.clock.nextAsync();
  }

  /** Timers still scheduled (the claims' keep-alive timers included). */
  pendingTimers(): number {
    return this.clock.countTimers();
  }

  /** Gives the real timers back. Idempotent. */
  uninstall(): void {
    if (this.uninstalled) return;
    this.uninstalled = true;
    this.clock.uninstall();
  }
}

/** Lets every pending promise callback run (one real macrotask: the microtask queue drains first). */
export function settle(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}
