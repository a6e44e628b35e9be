// How a claim's lease is kept alive while its effect runs (Claim.keepAlive, src/effects/claim.ts):
// on a fake clock against a store whose renewals the test answers (when each renewal goes out,
// what a stalled, failed or lost one does, when a cancelled call's claim is given up), then on
// real timers through applyEffect (the protocol keeps the claim of a running execute alive, and
// the timer does not hold the process open).
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { withGlobal } from '@sinonjs/fake-timers';
import { z } from 'zod';
import { Claim, monotonicNow } from '../../src/effects/claim.js';
import { EffectClaimLostError } from '../../src/errors/errors.js';
import type { EffectLogger } from '../../src/effects/effect-report.js';
import { defineEffectTool, type IEffectStore } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ClaimResult, ClaimToken, EffectClaims, FencedResult } from '../../src/stores/effect-store.js';
import { callOptions, captureLogger, makeCtx, RECORD_K as RECORD, silentLogger } from './helpers.js';

/** A store that notes when each claim was renewed; `answers` decide each renewal (default: ok at once). */
class RenewLog implements IEffectStore, EffectClaims {
  readonly renewed: Array<{ key: string; at: number }> = [];
  readonly released: Array<{ key: string; at: number }> = [];
  answers: Array<() => Promise<FencedResult>> = [];
  onRelease: () => Promise<FencedResult> = () => Promise.resolve({ status: 'ok' });

  at(key: string): number[] {
    return this.renewed.filter((r) => r.key === key).map((r) => r.at);
  }
  claim(key: string): Promise<ClaimResult> {
    return Promise.resolve({ status: 'acquired', token: { key, owner: 'me', fence: 1 }, takeover: false });
  }
  renew(token: ClaimToken): Promise<FencedResult> {
    this.renewed.push({ key: token.key, at: monotonicNow() });
    return (this.answers.shift() ?? (() => Promise.resolve<FencedResult>({ status: 'ok' })))();
  }
  release(token: ClaimToken): Promise<FencedResult> {
    this.released.push({ key: token.key, at: monotonicNow() });
    return this.onRelease();
  }
  get = () => Promise.resolve(undefined);
  put = () => Promise.resolve(RECORD);
  complete = () => Promise.reject(new Error('not used'));
}

const never = () => new Promise<FencedResult>(() => undefined);
const after = (clockMs: number, answer: FencedResult) => () =>
  new Promise<FencedResult>((resolve) => setTimeout(() => resolve(answer), clockMs));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Warning {
  readonly message: string;
  readonly meta: unknown;
}

describe('a claim kept alive, on a fake clock', () => {
  let clock: ReturnType<ReturnType<typeof withGlobal>['install']>;
  let stops: Array<() => void>;
  let warnings: Warning[];
  const logger: EffectLogger = { warn: (message, meta) => warnings.push({ message, meta }) };

  beforeEach(() => {
    clock = withGlobal(globalThis).install({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'],
    });
    stops = [];
    warnings = [];
  });
  afterEach(() => {
    for (const stop of stops) stop();
    clock.uninstall();
  });

  async function keep(
    store: RenewLog,
    key: string,
    leaseMs: number,
    signal = new AbortController().signal,
    graceMs = 60_000,
  ) {
    const claim = (await Claim.acquire(
      store,
      key,
      { owner: 'me', leaseMs, toolName: 't' },
      {
        busyWaitMs: 0,
        signal,
      },
    )) as Claim;
    const stop = claim.keepAlive(signal, graceMs, logger);
    stops.push(stop);
    return { claim, stop };
  }

  it('renews the lease each time a third of it has passed (600 ms: at 200, 400 and 600)', async () => {
    const store = new RenewLog();
    await keep(store, 'a', 600);
    await clock.tickAsync(650);
    expect(store.at('a')).toEqual([200, 400, 600]);
  });

  it('follows a stalled renewal with another a third of the lease later, not sooner', async () => {
    const store = new RenewLog();
    store.answers = [never, never, never];
    await keep(store, 'a', 600);
    await clock.tickAsync(650);
    expect(store.at('a')).toEqual([200, 400, 600]);
  });

  it('sends a failed renewal again at the next tick (a sixth of the lease later), and logs the failure', async () => {
    const store = new RenewLog();
    store.answers = [() => Promise.reject(new Error('connection reset'))];
    await keep(store, 'a', 600);
    await clock.tickAsync(550);
    expect(store.at('a')).toEqual([200, 300, 500]);
    expect(warnings).toEqual([
      { message: 'Could not renew the claim on effect "a".', meta: { error: 'connection reset' } },
    ]);
  });

  it('a late answer to an older renewal does not end the wait for the newer one', async () => {
    const store = new RenewLog();
    // The first renewal is answered 250 ms late (at 450), after the second went out (at 400).
    store.answers = [after(250, { status: 'ok' }), never, never];
    await keep(store, 'a', 600);
    await clock.tickAsync(650);
    expect(store.at('a')).toEqual([200, 400, 600]);
  });

  it('keeps each lease at its own pace: a short one next to a long one', async () => {
    const store = new RenewLog();
    await keep(store, 'short', 600);
    await keep(store, 'long', 6_000);
    await clock.tickAsync(2_050);
    expect(store.at('short')).toEqual([200, 400, 600, 800, 1_000, 1_200, 1_400, 1_600, 1_800, 2_000]);
    expect(store.at('long')).toEqual([2_000]);
  });

  it("a renewal answered lost marks the claim lost with the winner's record, ends the renewals, and warns once", async () => {
    const store = new RenewLog();
    store.answers = [() => Promise.resolve({ status: 'lost', record: RECORD })];
    const { claim } = await keep(store, 'k', 600);
    await clock.tickAsync(1_000);
    expect(claim.held).toBe(false);
    expect(claim.winner).toBe(RECORD);
    expect(store.at('k')).toEqual([200]);
    expect(warnings).toEqual([{ message: 'Lost the claim on effect "k" while applying it.', meta: { key: 'k' } }]);
    expect(clock.countTimers()).toBe(0);
  });

  it('after the signal aborted, keeps renewing for abortGraceMs from the tick that saw it, then releases the claim with a warning (a failed release is logged)', async () => {
    const store = new RenewLog();
    store.onRelease = () => Promise.reject(new Error('connection refused'));
    const cancel = new AbortController();
    const { claim } = await keep(store, 'k', 600, cancel.signal, 200);
    await clock.tickAsync(50);
    cancel.abort();
    await clock.tickAsync(1_000);
    // Seen at the tick at 100; given up at the tick at 300, not a tick later.
    expect(store.released).toEqual([{ key: 'k', at: 300 }]);
    expect(claim.held).toBe(false);
    expect(store.at('k')).toEqual([200]);
    expect(warnings).toEqual([
      {
        message: expect.stringMatching(
          /^The execute of effect "k" is still running 200 ms after its attempt was cancelled or timed out; its claim is released, so a retry may now apply the effect a second time\./,
        ),
        meta: { key: 'k' },
      },
      {
        message: 'Could not release the claim on effect "k"; it frees itself when its lease expires.',
        meta: { error: 'connection refused' },
      },
    ]);
  });

  it('a signal aborted before the keeping began counts from its first tick; a grace of 0 releases at the first tick after the abort', async () => {
    const store = new RenewLog();
    const cancelled = new AbortController();
    cancelled.abort();
    await clock.tickAsync(100);
    await keep(store, 'early', 600, cancelled.signal, 300);
    const cancel = new AbortController();
    await keep(store, 'zero', 600, cancel.signal, 0);
    await clock.tickAsync(50);
    cancel.abort();
    await clock.tickAsync(1_000);
    expect(store.released).toEqual([
      { key: 'zero', at: 200 },
      { key: 'early', at: 500 },
    ]);
  });

  it('once stopped, sends nothing more and leaves no timer behind', async () => {
    const store = new RenewLog();
    const { stop } = await keep(store, 'k', 600);
    await clock.tickAsync(250);
    stop();
    expect(clock.countTimers()).toBe(0);
    await clock.tickAsync(2_000);
    expect(store.at('k')).toEqual([200]);
  });

  it('a claim lost by its own last check sends no more renewals', async () => {
    const store = new RenewLog();
    // The keep-alive's renewal at 200 stalls; the check at 350 renews (half the lease is gone) and learns the
    // key is another attempt's.
    store.answers = [never, () => Promise.resolve({ status: 'lost' })];
    const { claim } = await keep(store, 'k', 600);
    await clock.tickAsync(350);
    await expect(claim.assertOwned()).rejects.toThrow(EffectClaimLostError);
    expect(store.at('k')).toEqual([200, 350]);
    await clock.tickAsync(1_000);
    expect(store.at('k')).toEqual([200, 350]);
    expect(clock.countTimers()).toBe(0);
  });

  it('an answer that arrives after stop changes the claim only: a late loss or failure warns nothing', async () => {
    const store = new RenewLog();
    let answer: (result: FencedResult) => void = () => undefined;
    let fail: (error: Error) => void = () => undefined;
    store.answers = [
      () => new Promise<FencedResult>((resolve) => (answer = resolve)),
      () => new Promise<FencedResult>((_, reject) => (fail = reject)),
    ];
    const lost = await keep(store, 'lost', 600);
    const failed = await keep(store, 'failed', 600);
    await clock.tickAsync(250);
    lost.stop();
    failed.stop();
    answer({ status: 'lost', record: RECORD });
    fail(new Error('connection reset'));
    await clock.tickAsync(1_000);
    expect(lost.claim.held).toBe(false);
    expect(lost.claim.winner).toBe(RECORD);
    expect(failed.claim.held).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('a lease of 0 ms is never renewed', async () => {
    const store = new RenewLog();
    await keep(store, 'k', 0);
    expect(clock.countTimers()).toBe(0);
    await clock.tickAsync(1_000);
    expect(store.at('k')).toEqual([]);
  });
});

/** A memory store that counts renewals and can fail the next few renewals or releases. */
class RenewStore extends MemoryEffectStore {
  renews = 0;
  releases = 0;
  failRenews = 0;
  failReleases = 0;
  override renew(token: ClaimToken, leaseMs: number): Promise<FencedResult> {
    this.renews++;
    if (this.failRenews > 0) {
      this.failRenews--;
      return Promise.reject(new Error('store unreachable (renew)'));
    }
    return super.renew(token, leaseMs);
  }
  override release(token: ClaimToken): Promise<FencedResult> {
    this.releases++;
    if (this.failReleases > 0) {
      this.failReleases--;
      return Promise.reject(new Error('store unreachable (release)'));
    }
    return super.release(token);
  }
}

/** An effect tool whose execute takes `ms` and notes how many renewals the store had seen by then. */
function slowTool(store: RenewStore, ms: number, seen: { atStart?: number; atEnd?: number }) {
  return defineEffectTool({
    inputSchema: z.object({}),
    execute: async () => {
      seen.atStart = store.renews;
      await sleep(ms);
      seen.atEnd = store.renews;
      return 'done';
    },
  });
}

describe('the claim of a running effect call, on real timers', () => {
  it('is renewed about every third of its lease while execute runs, and not once the call returned', async () => {
    const store = new RenewStore();
    const seen: { atStart?: number; atEnd?: number } = {};
    const ctx = makeCtx('r');
    await applyEffect(
      { tool: slowTool(store, 2_000, seen), toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, leaseMs: 300, logger: silentLogger },
    );
    const during = (seen.atEnd ?? 0) - (seen.atStart ?? 0);
    // Every 100 ms: about 20 in 2 s (at half the lease it would be 10, at a sixth 40); timers fire late under load.
    expect(during).toBeGreaterThanOrEqual(11);
    expect(during).toBeLessThanOrEqual(24);
    const after = store.renews;
    await sleep(500);
    expect(store.renews).toBe(after);
  });

  it('stays alive through failed renewals: they are logged, and later ones keep the claim', async () => {
    const store = new RenewStore();
    store.failRenews = 2;
    const logger = captureLogger();
    const seen: { atStart?: number; atEnd?: number } = {};
    const ctx = makeCtx('r');
    const res = await applyEffect(
      { tool: slowTool(store, 900, seen), toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, leaseMs: 300, logger },
    );
    expect(res.report.outcome).toBe('executed');
    expect(logger.messages.filter((m) => /Could not renew the claim on effect/.test(m))).toHaveLength(2);
    expect((seen.atEnd ?? 0) - (seen.atStart ?? 0)).toBeGreaterThanOrEqual(4);
    expect((await store.get(res.report.key))?.origin).toBe('executed');
  });

  it('past abortGraceMs the claim of a cancelled, hung execute is released, and a release that failed is logged', async () => {
    const store = new RenewStore();
    store.failReleases = 1;
    const logger = captureLogger();
    const cancel = new AbortController();
    const ctx = makeCtx('r', { signal: cancel.signal });
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        cancel.abort(new Error('timed out'));
        await sleep(700); // ignores its signal
        return 'late';
      },
    });
    await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, leaseMs: 300, abortGraceMs: 200, logger },
    );
    expect(store.releases).toBe(1);
    expect(logger.messages.some((m) => /still running 200 ms after its attempt was cancelled/.test(m))).toBe(true);
    expect(logger.messages.some((m) => /Could not release the claim on effect/.test(m))).toBe(true);
  });

  it('does not keep the process alive with its timer', async () => {
    // Resources keeping the event loop alive; an unref'd timer is not one of them.
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const store = new MemoryEffectStore();
    const claim = (await Claim.acquire(
      store,
      'k',
      { owner: 'me', leaseMs: 600, toolName: 't' },
      { busyWaitMs: 0, signal: new AbortController().signal },
    )) as Claim;
    const before = timers();
    const stop = claim.keepAlive(new AbortController().signal, 60_000, silentLogger);
    expect(timers()).toBe(before);
    stop();
  });
});
