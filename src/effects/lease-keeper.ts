import type { Lease } from './effect-lease.js';
import type { EffectLogger } from './effect-report.js';
import { describeError } from './store-failure.js';

class Kept implements KeptLease {
  renewing = false;

  constructor(
    private readonly held: Set<Kept>,
    readonly lease: Lease,
    readonly signal: AbortSignal,
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
 * A lease is renewed once it is a third of its length old; the timer ticks every sixth of the
 * shortest lease held, so every renewal is sent before the lease is half gone. A lease whose
 * attempt was cancelled or timed out (`signal` aborted) is no longer renewed: the engine has given
 * up on that attempt, so its lease runs out and a retry can take the key over. The timer does not
 * keep the process alive and stops when a tick finds no lease held.
 */
class LeaseKeeper {
  private readonly kept = new Set<Kept>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private periodMs = 0;

  keep(lease: Lease, signal: AbortSignal, logger: EffectLogger): KeptLease {
    const kept = new Kept(this.kept, lease, signal, logger);
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
    const now = Date.now();
    let shortest = Infinity;
    for (const kept of this.kept) {
      if (kept.signal.aborted) {
        this.kept.delete(kept);
        continue;
      }
      shortest = Math.min(shortest, kept.lease.leaseMs);
      if (!kept.renewing && now - kept.lease.since >= kept.lease.leaseMs / 3) this.renew(kept, now);
    }
    // The shortest lease that set the pace may be gone: tick no faster than the ones left need.
    if (shortest !== Infinity && periodFor(shortest) > this.periodMs * 2) this.start(periodFor(shortest));
  }

  private renew(kept: Kept, sent: number): void {
    const { lease, logger } = kept;
    kept.renewing = true;
    lease.claims.renew(lease.token, lease.leaseMs).then(
      (renewed) => {
        kept.renewing = false;
        if (renewed.status === 'ok') {
          lease.since = sent;
          return;
        }
        this.kept.delete(kept);
        logger.warn(`Lost the claim on effect "${lease.token.key}" while applying it.`, { key: lease.token.key });
      },
      (error: unknown) => {
        kept.renewing = false;
        logger.warn(`Could not renew the claim on effect "${lease.token.key}".`, { error: describeError(error) });
      },
    );
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
 * Renews `lease` until `stop` is called (see {@link LeaseKeeper} for when and how); a lease of
 * 0 ms or less is not renewed.
 */
export function keepLease(lease: Lease, signal: AbortSignal, logger: EffectLogger): KeptLease | undefined {
  return lease.leaseMs > 0 ? keeper.keep(lease, signal, logger) : undefined;
}
