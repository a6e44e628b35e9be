import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { EffectBusyError, EffectClaimLostError } from '../errors/errors.js';
import type {
  ClaimRequest,
  ClaimResult,
  ClaimToken,
  EffectClaims,
  EffectRecord,
  EffectRecordInput,
  IEffectStore,
} from '../stores/effect-store.js';
import type { EffectLogger } from './effect-report.js';
import { describeError, storeFailure } from './store-failure.js';

/**
 * Milliseconds on this process's monotonic clock. Lease ages are measured on it, never on the wall
 * clock: a wall clock stepped back would make a lost lease look young.
 */
export const monotonicNow = (): number => performance.now();

// Claim owner tokens only need to be unique: one random prefix per process and a counter, not a UUID per call.
const OWNER_PREFIX = randomUUID();
let ownerSeq = 0;
/** A claim owner token unique to this call. */
export const nextOwner = (): string => `${OWNER_PREFIX}:${++ownerSeq}`;

/** How {@link Claim.acquire} waits for another attempt's live claim on the key. */
export interface ClaimWait {
  /** How long to wait before {@link EffectBusyError}, in ms. */
  readonly busyWaitMs: number;
  /** Stops the wait with its reason. */
  readonly signal: AbortSignal;
  /** Called once, when the wait begins. */
  readonly onBusy?: () => void;
}

/**
 * This attempt's claim on an effect key: the lease a store with claims granted it, and the one
 * place that knows whether the attempt may still apply the effect under it.
 *
 * A claim is held from {@link Claim.acquire} until it is lost (a renewal or the last check learned
 * that another attempt took the key over or finished it; that attempt's record, when there is one,
 * is the {@link winner}) or released (given back after a failed attempt, or past the abort grace of
 * {@link keepAlive}). Once it is not held, nothing may be applied under it. Lease ages are measured
 * on the monotonic clock from when the claim or renewal was sent, so they are never late.
 */
export class Claim {
  private state: 'held' | 'lost' | 'released' = 'held';
  private finished: EffectRecord | undefined;

  private constructor(
    private readonly store: IEffectStore & EffectClaims,
    /** The store's proof of the claim: key, owner token and fence number. */
    readonly token: ClaimToken,
    /** The lease's length, in ms. */
    readonly leaseMs: number,
    private since: number,
    /** Whether the key was taken over from another attempt whose lease had expired (its fence grew). */
    readonly takeover: boolean,
  ) {}

  /**
   * Claims `key`. A live lease of another attempt is waited for with growing pauses (25 ms up to
   * 500 ms, never past its expiry) until `busyWaitMs` have passed, then {@link EffectBusyError}. A
   * finished key answers with its record instead of a claim.
   *
   * @throws EffectStoreError when the store cannot be reached (nothing was applied).
   */
  static async acquire(
    store: IEffectStore & EffectClaims,
    key: string,
    request: ClaimRequest,
    wait: ClaimWait,
  ): Promise<Claim | EffectRecord> {
    const started = monotonicNow();
    for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
      const sent = monotonicNow();
      let claimed: ClaimResult;
      try {
        claimed = await store.claim(key, request);
      } catch (error) {
        throw storeFailure(error, key, 'claim');
      }
      if (claimed.status === 'acquired')
        return new Claim(store, claimed.token, request.leaseMs, sent, claimed.takeover);
      if (claimed.status === 'done') return claimed.record;
      if (pause === 25) wait.onBusy?.();
      const waited = Math.round(monotonicNow() - started);
      if (waited >= wait.busyWaitMs) throw new EffectBusyError({ key, waitedMs: waited });
      wait.signal.throwIfAborted();
      await sleep(Math.min(pause, claimed.leaseRemainingMs + 1, wait.busyWaitMs - waited));
    }
  }

  get key(): string {
    return this.token.key;
  }

  /** Whether this attempt still owns the key: neither lost nor released. */
  get held(): boolean {
    return this.state === 'held';
  }

  /** The finished record of the attempt that took the key over, once a lost claim learned it. */
  get winner(): EffectRecord | undefined {
    return this.finished;
  }

  /** When the lease last started (the claim or the last renewal answered `ok` was sent), monotonic ms. */
  get startedAt(): number {
    return this.since;
  }

  /**
   * Renews the lease now (one store round trip): `true` while this attempt owns the key, `false`
   * when the store answered that it does not (the claim is then lost, with the winner's record if
   * the key is finished). A store error is thrown as it is.
   */
  async renew(): Promise<boolean> {
    const sent = monotonicNow();
    const renewed = await this.store.renew(this.token, this.leaseMs);
    if (renewed.status === 'lost') {
      this.markLost(renewed.record);
      return false;
    }
    // A late answer to an older renewal must not make the lease look older than it is.
    this.since = Math.max(this.since, sent);
    return true;
  }

  /** Another attempt owns the key (or finished it: `winner` is its record); nothing may be applied under this claim. */
  markLost(winner?: EffectRecord): void {
    if (this.state === 'held') this.state = 'lost';
    if (winner !== undefined) this.finished = winner;
  }

  /**
   * The last check before the effect, one store round trip at most; resolves to `undefined` when
   * the effect may be applied, or to the winner's record when another attempt finished it:
   * - a lease younger than half its length cannot have been taken over (the store hands only an
   *   expired lease to another attempt), but it can have been ended by a late attempt's
   *   first-writer-wins `put` of the same effect: a read finds that record. Only an attempt that
   *   claimed the key before can write such a record, so the first claim of a key (fence 1) skips
   *   the read;
   * - an older lease is renewed.
   * A claim that is (or meanwhile became, through {@link keepAlive}) lost without a winner, or
   * released, throws {@link EffectClaimLostError}; so does one whose check was answered only after
   * its lease (counted from when it last started) could have run out.
   *
   * Between this check and the remote write the call is not protected by the store any more: a
   * process paused there past its lease can still apply late (see the README's guarantees).
   *
   * @throws EffectStoreError when the read or the renewal fails (nothing was applied).
   */
  async assertOwned(): Promise<EffectRecord | undefined> {
    if (this.held) await this.check();
    // A check answered after the lease could have run out (a read or renewal that stalled) proves
    // nothing about now: another attempt may hold the key already.
    if (this.held && this.leaseMs > 0 && monotonicNow() - this.since >= this.leaseMs)
      throw new EffectClaimLostError(this.key);
    if (this.held) return undefined;
    if (this.finished !== undefined) return this.finished;
    throw new EffectClaimLostError(this.key);
  }

  private async check(): Promise<void> {
    if (monotonicNow() - this.since < this.leaseMs / 2) {
      if (this.token.fence <= 1) return;
      let record: EffectRecord | undefined;
      try {
        record = await this.store.get(this.key);
      } catch (error) {
        throw storeFailure(error, this.key, 'read');
      }
      if (record !== undefined) this.markLost(record);
      return;
    }
    try {
      await this.renew();
    } catch (error) {
      throw storeFailure(error, this.key, 'renew');
    }
  }

  /**
   * Writes the finished effect's record under this claim; resolves to the record the store keeps
   * (this one, or another attempt's that was there first). Lost without a winner (another attempt
   * took the key over and is still working, but this effect did happen), it records with a
   * first-writer-wins `put`, which also ends that claim, so the other attempt's check right before
   * its effect fails instead of applying a second one. A store error is thrown as it is.
   */
  async complete(record: EffectRecordInput): Promise<EffectRecord | undefined> {
    const completed = await this.store.complete(this.token, record);
    if (completed.status === 'ok') return completed.record;
    this.markLost(completed.record);
    return completed.record ?? (await this.store.put(this.key, record)) ?? undefined;
  }

  /**
   * Gives the key back (after a failed attempt, so a retry can claim it at once) unless the claim
   * is no longer held; a failure is logged (the lease then runs out by itself).
   */
  async release(logger: EffectLogger): Promise<void> {
    if (!this.held) return;
    this.state = 'released';
    try {
      await this.store.release(this.token);
    } catch (error) {
      logger.warn(`Could not release the claim on effect "${this.key}"; it frees itself when its lease expires.`, {
        error: describeError(error),
      });
    }
  }

  /**
   * Renews the lease while the effect runs, until the returned `stop` is called; a lease of 0 ms
   * or less is not renewed. See {@link KeepAlive} for the pace, and for what happens once `signal`
   * aborted: the claim stays held for `graceMs` more, then it is released with a warning.
   */
  keepAlive(signal: AbortSignal, graceMs: number, logger: EffectLogger): () => void {
    if (this.leaseMs <= 0) return () => undefined;
    const kept = new KeepAlive(this, signal, graceMs, logger);
    return () => kept.stop();
  }
}

/**
 * The renewals of one claim while its effect runs, on an interval of its own (a sixth of the
 * lease) that does not keep the process alive:
 * - the lease is renewed at the first tick once a third of it has passed since it last started,
 *   so every renewal is sent before half of it is gone; a failed renewal goes out again at the
 *   next tick;
 * - a renewal left unanswered for a third of the lease (a stalled connection) is followed by
 *   another, so one slow answer cannot let a live attempt's lease run out;
 * - a renewal answered `lost` marks the claim lost (which stops the call at its last check before
 *   the effect) and ends the renewals, with a warning;
 * - the claim is kept even after the attempt's signal aborted (a cancel, a start-to-close
 *   timeout): an `execute` that ignores its signal may still apply the effect, so a retry
 *   elsewhere must keep waiting for its record instead of applying it beside. Only at the first
 *   tick `graceMs` after the tick that saw the abort is the claim released, with a warning that a
 *   duplicate is now possible.
 * Answers that arrive after `stop` change the claim's state only.
 */
class KeepAlive {
  private readonly timer: ReturnType<typeof setInterval>;
  private stopped = false;
  /** When the renewal still unanswered was sent, monotonic ms. */
  private renewingSince: number | undefined;
  /** When a tick first saw the signal aborted, monotonic ms. */
  private abortedAt: number | undefined;

  constructor(
    private readonly claim: Claim,
    private readonly signal: AbortSignal,
    private readonly graceMs: number,
    private readonly logger: EffectLogger,
  ) {
    this.timer = setInterval(() => this.tick(), Math.max(1, Math.floor(claim.leaseMs / 6)));
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private tick(): void {
    if (!this.claim.held) return this.stop();
    const now = monotonicNow();
    if (this.signal.aborted) {
      this.abortedAt ??= now;
      if (now - this.abortedAt >= this.graceMs) return this.giveUp();
    }
    const third = this.claim.leaseMs / 3;
    const due = this.renewingSince === undefined || now - this.renewingSince >= third;
    if (due && now - this.claim.startedAt >= third) this.renew(now);
  }

  private renew(sent: number): void {
    this.renewingSince = sent;
    const settled = (): void => {
      if (this.renewingSince === sent) this.renewingSince = undefined;
    };
    const { key } = this.claim;
    this.claim.renew().then(
      (owned) => {
        settled();
        if (owned || this.stopped) return;
        this.stop();
        this.logger.warn(`Lost the claim on effect "${key}" while applying it.`, { key });
      },
      (error: unknown) => {
        settled();
        if (this.stopped) return;
        this.logger.warn(`Could not renew the claim on effect "${key}".`, { error: describeError(error) });
      },
    );
  }

  private giveUp(): void {
    this.stop();
    const { key } = this.claim;
    this.logger.warn(
      `The execute of effect "${key}" is still running ${this.graceMs} ms after its attempt was cancelled or timed out; its claim is released, so a retry may now apply the effect a second time. Pass the call's abortSignal on to what execute awaits.`,
      { key },
    );
    void this.claim.release(this.logger);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
