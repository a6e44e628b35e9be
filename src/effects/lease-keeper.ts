import { monotonicNow, type Lease } from './effect-lease.js';
import type { EffectLogger } from './effect-report.js';
import { describeError } from './store-failure.js';
import { MAX_TIMEOUT_MS, wholeOption } from '../stores/store-options.js';

/**
 * Default time a claim stays held after the attempt's signal aborted (cancellation, a timeout)
 * while its `execute` is still running in this process, in ms: 2 minutes. Past it the claim is
 * released with a warning, so a hung `execute` cannot block its key forever.
 */
export const DEFAULT_ABORT_GRACE_MS = 120_000;

/**
 * Accepted `abortGraceMs`: a whole number of ms from 0 (the claim is released at the first tick
 * after the abort) to 2^31 - 1 (about 24.8 days, the longest delay Node's timers accept).
 */
export const ABORT_GRACE_RANGE = { min: 0, max: MAX_TIMEOUT_MS } as const;

/**
 * An `abortGraceMs` option as `owner` was given it: the value, or {@link DEFAULT_ABORT_GRACE_MS}
 * when absent. `NaN` would switch the bound off (no time is ever `>= NaN` past the abort), so it is
 * refused with the rest of what is outside {@link ABORT_GRACE_RANGE}.
 *
 * @throws InvalidOptionError naming the option, the value and the range.
 */
export function abortGraceOption(owner: string, value: unknown): number {
  return wholeOption(owner, 'abortGraceMs', value, DEFAULT_ABORT_GRACE_MS, ABORT_GRACE_RANGE);
}

class Kept implements KeptLease {
  /** When the renewal still unanswered was sent, on the monotonic clock. */
  renewingSince: number | undefined;
  abortedAt: number | undefined;

  constructor(
    private readonly held: Set<Kept>,
    readonly lease: Lease,
    readonly signal: AbortSignal,
    readonly abortGraceMs: number,
    readonly logger: EffectLogger,
  ) {}

  stop(): void {
    this.held.delete(this);
  }
}

/**
 * Keeps the leases of this process's running effect calls alive with one timer for all of them,
 * instead of a timer per call (a call that finishes in microseconds never touches a timer).
 *
 * A lease is renewed once it is a third of its length old (on the monotonic clock); the timer
 * ticks every sixth of the shortest lease held, so every renewal is sent before the lease is half
 * gone; a renewal left unanswered for a third of the lease is followed by another. A lease is kept as long as its call runs in this live process, even after the attempt's
 * signal aborted (a cancel, a start-to-close timeout): an `execute` that ignores its signal may
 * still apply the effect, so a retry elsewhere must keep waiting for its record instead of
 * applying it beside. Only `abortGraceMs` after the abort is the claim released, with a warning
 * that a duplicate is now possible. A renewal answered `lost` marks the lease lost, which stops the
 * call at its last check before the effect. The timer does not keep the process alive and stops
 * when a tick finds no lease held.
 */
class LeaseKeeper {
  private readonly kept = new Set<Kept>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private periodMs = 0;

  keep(lease: Lease, signal: AbortSignal, abortGraceMs: number, logger: EffectLogger): KeptLease {
    const kept = new Kept(this.kept, lease, signal, abortGraceMs, logger);
    this.kept.add(kept);
    const period = periodFor(lease.leaseMs);
    if (this.timer === undefined || period < this.periodMs) this.start(period);
    return kept;
  }

  private start(periodMs: number): void {
    clearInterval(this.timer);
    this.periodMs = periodMs;
    this.timer = setInterval(() => this.tick(), periodMs);
    this.timer.unref();
  }

  private tick(): void {
    if (this.kept.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = monotonicNow();
    let shortest = Infinity;
    for (const kept of this.kept) {
      if (kept.signal.aborted) {
        kept.abortedAt ??= now;
        if (now - kept.abortedAt >= kept.abortGraceMs) {
          this.giveUp(kept);
          continue;
        }
      }
      shortest = Math.min(shortest, kept.lease.leaseMs);
      const third = kept.lease.leaseMs / 3;
      // A renewal unanswered for a third of the lease (a stalled connection) is not waited for:
      // another one goes out, so one slow answer cannot let a live attempt's lease run out.
      const due = kept.renewingSince === undefined || now - kept.renewingSince >= third;
      if (due && now - kept.lease.since >= third) this.renew(kept, now);
    }
    // The shortest lease that set the pace may be gone: tick no faster than the ones left need.
    if (shortest !== Infinity && periodFor(shortest) > this.periodMs * 2) this.start(periodFor(shortest));
  }

  private renew(kept: Kept, sent: number): void {
    const { lease, logger } = kept;
    kept.renewingSince = sent;
    const settled = (): void => {
      if (kept.renewingSince === sent) kept.renewingSince = undefined;
    };
    lease.store.renew(lease.token, lease.leaseMs).then(
      (renewed) => {
        settled();
        if (renewed.status === 'ok') {
          // A late answer to an older renewal must not make the lease look older than it is.
          lease.since = Math.max(lease.since, sent);
          return;
        }
        lease.lost = true;
        if (renewed.record !== undefined) lease.winner = renewed.record;
        this.kept.delete(kept);
        logger.warn(`Lost the claim on effect "${lease.token.key}" while applying it.`, { key: lease.token.key });
      },
      (error: unknown) => {
        settled();
        logger.warn(`Could not renew the claim on effect "${lease.token.key}".`, { error: describeError(error) });
      },
    );
  }

  private giveUp(kept: Kept): void {
    this.kept.delete(kept);
    const { lease, logger } = kept;
    lease.lost = true;
    logger.warn(
      `The execute of effect "${lease.token.key}" is still running ${kept.abortGraceMs} ms after its attempt was cancelled or timed out; its claim is released, so a retry may now apply the effect a second time. Pass the call's abortSignal on to what execute awaits.`,
      { key: lease.token.key },
    );
    lease.store.release(lease.token).then(undefined, (error: unknown) => {
      logger.warn(
        `Could not release the claim on effect "${lease.token.key}"; it frees itself when its lease expires.`,
        {
          error: describeError(error),
        },
      );
    });
  }
}

function periodFor(leaseMs: number): number {
  return Math.max(1, Math.floor(leaseMs / 6));
}

const keeper = new LeaseKeeper();

/** A lease being kept alive; `stop` once the effect has returned or failed. */
export interface KeptLease {
  stop(): void;
}

/**
 * Renews `lease` until `stop` is called, including after `signal` aborted, for at most
 * `abortGraceMs` from then (see {@link LeaseKeeper}); a lease of 0 ms or less is not renewed.
 */
export function keepLease(
  lease: Lease,
  signal: AbortSignal,
  abortGraceMs: number,
  logger: EffectLogger,
): KeptLease | undefined {
  return lease.leaseMs > 0 ? keeper.keep(lease, signal, abortGraceMs, logger) : undefined;
}
