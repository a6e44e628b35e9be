// The pace of the lease keeper (src/effects/lease-keeper.ts) on a fake clock, against a store
// whose renewals the test answers: when each renewal goes out, what a stalled, failed or lost one
// does, and when a cancelled call's claim is given up. Found unguarded by the mutation run
// (docs/reliability.md, "Mutation testing"); real-time behaviour is in lease-keeper.mutants.test.ts.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { withGlobal } from '@sinonjs/fake-timers';
import { monotonicNow, type Lease } from '../../src/effects/effect-lease.js';
import { keepLease, type KeptLease } from '../../src/effects/lease-keeper.js';
import type { EffectLogger } from '../../src/effects/effect-report.js';
import type { IEffectStore } from '../../src/index.js';
import type { EffectClaims, FencedResult } from '../../src/stores/effect-store.js';
import { RECORD_K as RECORD } from './helpers.js';

/** A store that notes when each lease was renewed; `answers` decide each renewal (default: ok at once). */
class RenewLog implements IEffectStore, EffectClaims {
  readonly renewed: Array<{ key: string; at: number }> = [];
  readonly released: Array<{ key: string; at: number }> = [];
  answers: Array<() => Promise<FencedResult>> = [];
  onRelease: () => Promise<FencedResult> = () => Promise.resolve({ status: 'ok' });

  at(key: string): number[] {
    return this.renewed.filter((r) => r.key === key).map((r) => r.at);
  }
  renew(token: { key: string }): Promise<FencedResult> {
    this.renewed.push({ key: token.key, at: monotonicNow() });
    return (this.answers.shift() ?? (() => Promise.resolve<FencedResult>({ status: 'ok' })))();
  }
  release(token: { key: string }): Promise<FencedResult> {
    this.released.push({ key: token.key, at: monotonicNow() });
    return this.onRelease();
  }
  get = () => Promise.resolve(undefined);
  put = () => Promise.resolve(RECORD);
  claim = () => Promise.reject(new Error('not used'));
  complete = () => Promise.reject(new Error('not used'));
}

const never = () => new Promise<FencedResult>(() => undefined);
const after = (clockMs: number, answer: FencedResult) => () =>
  new Promise<FencedResult>((resolve) => setTimeout(() => resolve(answer), clockMs));

interface Warning {
  readonly message: string;
  readonly meta: unknown;
}

let clock: ReturnType<ReturnType<typeof withGlobal>['install']>;
let held: KeptLease[];
let warnings: Warning[];
const logger: EffectLogger = { warn: (message, meta) => warnings.push({ message, meta }) };

beforeEach(() => {
  clock = withGlobal(globalThis).install({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'],
  });
  held = [];
  warnings = [];
});
afterEach(async () => {
  for (const kept of held) kept.stop();
  // The keeper is one per process: let a tick find nothing held, so it stops its timer on this clock.
  await clock.tickAsync(20_000);
  clock.uninstall();
});

function keep(store: RenewLog, key: string, leaseMs: number, signal = new AbortController().signal, graceMs = 60_000) {
  const lease: Lease = { store, token: { key, owner: 'me', fence: 1 }, leaseMs, since: monotonicNow(), lost: false };
  const kept = keepLease(lease, signal, graceMs, logger);
  if (kept === undefined) throw new Error('not kept');
  held.push(kept);
  return { lease, kept };
}

describe('the lease keeper on a fake clock', () => {
  it('renews a lease at the first tick it is a third of its length old (600 ms: at 200, 400 and 600)', async () => {
    const store = new RenewLog();
    keep(store, 'a', 600);
    await clock.tickAsync(650);
    expect(store.at('a')).toEqual([200, 400, 600]);
  });

  it('follows a stalled renewal with another a third of the lease later, not on every tick', async () => {
    const store = new RenewLog();
    store.answers = [never, never, never];
    keep(store, 'a', 600);
    await clock.tickAsync(650);
    expect(store.at('a')).toEqual([200, 400, 600]);
  });

  it('sends a failed renewal again at the next tick', async () => {
    const store = new RenewLog();
    store.answers = [() => Promise.reject(new Error('connection reset'))];
    keep(store, 'a', 600);
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
    keep(store, 'a', 600);
    await clock.tickAsync(650);
    expect(store.at('a')).toEqual([200, 400, 600]);
  });

  it('a steady stream of new calls does not hold back the renewals of a running one', async () => {
    const store = new RenewLog();
    keep(store, 'running', 600);
    for (let t = 0; t < 650; t += 50) {
      keep(store, `short-lived-${t}`, 600).kept.stop();
      await clock.tickAsync(50);
    }
    expect(store.at('running')).toEqual([200, 400, 600]);
  });

  it('a short lease keeps its pace next to a long one', async () => {
    const store = new RenewLog();
    keep(store, 'short', 600);
    keep(store, 'long', 60_000);
    await clock.tickAsync(650);
    expect(store.at('short')).toEqual([200, 400, 600]);
  });

  it('ticks slower once the short lease that set the pace is gone, and no slower than the rest need', async () => {
    const store = new RenewLog();
    const short = keep(store, 'short', 600);
    keep(store, 'long', 6_000);
    keep(store, 'medium', 1_800);
    await clock.tickAsync(250);
    short.kept.stop();
    // At 300 the pace becomes the medium lease's sixth (300 ms): ticks at 600, 900, 1200, …
    await clock.tickAsync(2_300);
    expect(store.at('medium')).toEqual([600, 1_200, 1_800, 2_400]);
    expect(store.at('long')).toEqual([2_100]);
  });

  it('keeps its pace when the leases left would tick only twice as slow (no restart for so little)', async () => {
    const store = new RenewLog();
    const short = keep(store, 'short', 600);
    keep(store, 'medium', 1_200);
    await clock.tickAsync(250);
    short.kept.stop();
    await clock.tickAsync(700);
    expect(store.at('medium')).toEqual([400, 800]);
  });

  it('leaves no timer behind once nothing is held, after a shorter lease replaced its pace', async () => {
    const store = new RenewLog();
    const long = keep(store, 'long', 6_000);
    const short = keep(store, 'short', 600);
    long.kept.stop();
    short.kept.stop();
    await clock.tickAsync(2_000);
    expect(clock.countTimers()).toBe(0);
  });

  it("a renewal answered lost marks the lease lost with the winner's record, stops renewing it, and warns once", async () => {
    const store = new RenewLog();
    store.answers = [() => Promise.resolve({ status: 'lost', record: RECORD })];
    const { lease } = keep(store, 'k', 600);
    await clock.tickAsync(1_000);
    expect(lease.lost).toBe(true);
    expect(lease.winner).toBe(RECORD);
    expect(store.at('k')).toEqual([200]);
    expect(warnings).toEqual([{ message: 'Lost the claim on effect "k" while applying it.', meta: { key: 'k' } }]);
  });

  it('gives up a cancelled call at the first tick abortGraceMs after the tick that saw the abort', async () => {
    const store = new RenewLog();
    store.onRelease = () => Promise.reject(new Error('connection refused'));
    const cancel = new AbortController();
    const { lease } = keep(store, 'k', 600, cancel.signal, 200);
    await clock.tickAsync(50);
    cancel.abort();
    // Seen at the tick at 100; given up at 300, not a tick later.
    await clock.tickAsync(260);
    expect(store.released).toEqual([{ key: 'k', at: 300 }]);
    expect(lease.lost).toBe(true);
    expect(warnings).toEqual([
      {
        message: expect.stringMatching(
          /^The execute of effect "k" is still running 200 ms after its attempt was cancelled/,
        ),
        meta: { key: 'k' },
      },
      {
        message: 'Could not release the claim on effect "k"; it frees itself when its lease expires.',
        meta: { error: 'connection refused' },
      },
    ]);
    // Renewed (at 200) until it was given up, not after.
    expect(store.at('k')).toEqual([200]);
  });
});
