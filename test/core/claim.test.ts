// The claim on an effect key (src/effects/claim.ts) on its own, against a store whose answers the
// test scripts, on a fake clock: how a key is claimed (and another attempt's live claim waited
// for), the last check before the effect, the record written under the claim, and its release.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { withGlobal } from '@sinonjs/fake-timers';
import { Claim, monotonicNow } from '../../src/effects/claim.js';
import type { EffectRecord, EffectRecordInput, IEffectStore } from '../../src/index.js';
import { EffectBusyError, EffectClaimLostError, EffectStoreError } from '../../src/errors/errors.js';
import type { ClaimResult, ClaimToken, EffectClaims, FencedResult } from '../../src/stores/effect-store.js';
import { RECORD_K as RECORD } from './helpers.js';

/** A store whose every answer the test scripts; it notes each call and when it came (fake clock). */
class ScriptedStore implements IEffectStore, EffectClaims {
  readonly calls: Array<{ op: string; at: number }> = [];
  claims: Array<() => Promise<ClaimResult>> = [];
  onGet: () => Promise<EffectRecord | undefined> = () => Promise.resolve(undefined);
  onPut: () => Promise<EffectRecord> = () => Promise.resolve(RECORD);
  onComplete: () => Promise<FencedResult> = () => Promise.resolve({ status: 'ok', record: RECORD });
  onRenew: () => Promise<FencedResult> = () => Promise.resolve({ status: 'ok' });
  onRelease: () => Promise<FencedResult> = () => Promise.resolve({ status: 'ok' });

  private note(op: string): void {
    this.calls.push({ op, at: monotonicNow() });
  }
  ops(): string[] {
    return this.calls.map((c) => c.op);
  }
  claim(): Promise<ClaimResult> {
    this.note('claim');
    const next = this.claims.shift() ?? (() => Promise.resolve(acquiredAnswer(1)));
    return next();
  }
  get(): Promise<EffectRecord | undefined> {
    this.note('get');
    return this.onGet();
  }
  put(): Promise<EffectRecord> {
    this.note('put');
    return this.onPut();
  }
  complete(): Promise<FencedResult> {
    this.note('complete');
    return this.onComplete();
  }
  renew(): Promise<FencedResult> {
    this.note('renew');
    return this.onRenew();
  }
  release(): Promise<FencedResult> {
    this.note('release');
    return this.onRelease();
  }
}

const token = (fence: number): ClaimToken => ({ key: 'k', owner: 'me', fence });
const acquiredAnswer = (fence: number): ClaimResult => ({ status: 'acquired', token: token(fence), takeover: false });
const busy = (leaseRemainingMs: number) => () =>
  Promise.resolve<ClaimResult>({ status: 'busy', owner: 'other', leaseRemainingMs });
const unreachable = (what: string) => () => Promise.reject(new Error(`connection refused (${what})`));
const request = { owner: 'me', leaseMs: 1_000, toolName: 't' };
const noWait = { busyWaitMs: 10_000, signal: new AbortController().signal };
const record: EffectRecordInput = { toolName: 't', result: 'mine', origin: 'executed' };

let clock: ReturnType<ReturnType<typeof withGlobal>['install']>;
beforeEach(() => {
  clock = withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => clock.uninstall());

/** A claim held on `store` from now, with the given fence. */
async function claimOn(store: ScriptedStore, fence = 2): Promise<Claim> {
  store.claims.unshift(() => Promise.resolve(acquiredAnswer(fence)));
  const claimed = await Claim.acquire(store, 'k', request, noWait);
  if (!(claimed instanceof Claim)) throw new Error('not claimed');
  store.calls.length = 0;
  return claimed;
}

describe('claiming a key', () => {
  it("waits for another attempt's live claim with pauses from 25 ms doubling to 500 ms, then fails busy after busyWaitMs", async () => {
    const store = new ScriptedStore();
    store.claims = Array.from({ length: 10 }, () => busy(30_000));
    const claimed = Claim.acquire(store, 'k', request, { ...noWait, busyWaitMs: 800 }).catch((e: unknown) => e);
    await clock.tickAsync(2_000);
    const error = await claimed;
    expect(EffectBusyError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ key: 'k', waitedMs: 800 });
    // The last pause is cut to what is left of the wait, not a whole pause later.
    expect(store.calls.map((c) => c.at)).toEqual([0, 25, 75, 175, 375, 775, 800]);
  });

  it("asks again one millisecond after the other lease's end, never before it, and takes the key then", async () => {
    const store = new ScriptedStore();
    store.claims = [busy(10), () => Promise.resolve(acquiredAnswer(2))];
    const claimed = Claim.acquire(store, 'k', request, noWait);
    await clock.tickAsync(50);
    const claim = await claimed;
    expect(claim).toBeInstanceOf(Claim);
    expect((claim as Claim).token).toEqual(token(2));
    expect(store.calls.map((c) => c.at)).toEqual([0, 11]);
  });

  it('with busyWaitMs 0, asks once and fails busy at once instead of asking again', async () => {
    const store = new ScriptedStore();
    store.claims = [busy(5_000), () => Promise.resolve(acquiredAnswer(1))];
    const claimed = Claim.acquire(store, 'k', request, { ...noWait, busyWaitMs: 0 }).catch((e: unknown) => e);
    await clock.tickAsync(100);
    expect(EffectBusyError.isInstance(await claimed)).toBe(true);
    expect(store.ops()).toEqual(['claim']);
  });

  it('tells onBusy once when the wait begins, however many times it asks, and not when the key is free', async () => {
    const store = new ScriptedStore();
    store.claims = [busy(100), busy(100), busy(100), () => Promise.resolve(acquiredAnswer(2))];
    let told = 0;
    const claimed = Claim.acquire(store, 'k', request, { ...noWait, onBusy: () => told++ });
    await clock.tickAsync(1_000);
    expect(await claimed).toBeInstanceOf(Claim);
    expect(told).toBe(1);
    await Claim.acquire(store, 'k', request, { ...noWait, onBusy: () => told++ });
    expect(told).toBe(1);
  });

  it('stops waiting with the abort reason at its next ask once the signal aborted, and claims nothing', async () => {
    const store = new ScriptedStore();
    store.claims = Array.from({ length: 10 }, () => busy(30_000));
    const cancel = new AbortController();
    const reason = new Error('attempt cancelled');
    const claimed = Claim.acquire(store, 'k', request, { busyWaitMs: 20_000, signal: cancel.signal }).catch(
      (e: unknown) => e,
    );
    await clock.tickAsync(100);
    cancel.abort(reason);
    await clock.tickAsync(1_000);
    expect(await claimed).toBe(reason);
    expect(store.calls.map((c) => c.at)).toEqual([0, 25, 75, 175]);
  });

  it('a finished key answers with its record instead of a claim', async () => {
    const store = new ScriptedStore();
    store.claims = [() => Promise.resolve({ status: 'done', record: RECORD })];
    await expect(Claim.acquire(store, 'k', request, noWait)).resolves.toBe(RECORD);
  });

  it('a store that cannot be reached becomes an EffectStoreError saying the claim failed and nothing was applied', async () => {
    const store = new ScriptedStore();
    store.claims = [unreachable('claim')];
    const error = await Claim.acquire(store, 'k', request, noWait).catch((e: unknown) => e);
    expect(EffectStoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^Could not claim effect "k" .*nothing was applied: connection refused/);
  });
});

describe('the last ownership check', () => {
  it('a claim already lost stops the call without a store round trip, even with the store down', async () => {
    const store = new ScriptedStore();
    const lost = await claimOn(store);
    const won = await claimOn(store);
    store.onGet = unreachable('get');
    store.onRenew = unreachable('renew');
    lost.markLost();
    won.markLost(RECORD);
    await expect(lost.assertOwned()).rejects.toThrow(EffectClaimLostError);
    await expect(won.assertOwned()).resolves.toBe(RECORD);
    expect(store.ops()).toEqual([]);
  });

  it('a released claim stops the call too', async () => {
    const store = new ScriptedStore();
    const claim = await claimOn(store);
    await claim.release({ warn: () => undefined });
    await expect(claim.assertOwned()).rejects.toThrow(EffectClaimLostError);
  });

  it("a loss learned while the read is on its way counts: the winner's record, or EffectClaimLostError", async () => {
    const store = new ScriptedStore();
    const withWinner = await claimOn(store);
    store.onGet = () => {
      withWinner.markLost(RECORD);
      return Promise.resolve(undefined);
    };
    await expect(withWinner.assertOwned()).resolves.toBe(RECORD);

    const withoutWinner = await claimOn(store);
    store.onGet = () => {
      withoutWinner.markLost();
      return Promise.resolve(undefined);
    };
    await expect(withoutWinner.assertOwned()).rejects.toThrow(EffectClaimLostError);
  });

  it('a young claim of a key claimed before (fence > 1) is read: a record found is returned and the claim is lost', async () => {
    const store = new ScriptedStore();
    store.onGet = () => Promise.resolve(RECORD);
    const claim = await claimOn(store, 2);
    await expect(claim.assertOwned()).resolves.toBe(RECORD);
    expect(claim.held).toBe(false);
    expect(claim.winner).toBe(RECORD);
    expect(store.ops()).toEqual(['get']);
  });

  it('a young first claim of a key (fence 1) needs no round trip: nobody else can have recorded it', async () => {
    const store = new ScriptedStore();
    store.onGet = () => Promise.resolve(RECORD);
    const claim = await claimOn(store, 1);
    await clock.tickAsync(499);
    await expect(claim.assertOwned()).resolves.toBeUndefined();
    expect(store.ops()).toEqual([]);
  });

  it('a claim half its lease old is renewed, not read, and then counts from when the renewal was sent', async () => {
    const store = new ScriptedStore();
    const claim = await claimOn(store);
    await clock.tickAsync(500);
    await expect(claim.assertOwned()).resolves.toBeUndefined();
    expect(store.ops()).toEqual(['renew']);
    expect(claim.startedAt).toBe(500);
    expect(claim.held).toBe(true);
  });

  it("a renewal answered lost stops the call: with the winner's record, or EffectClaimLostError", async () => {
    const store = new ScriptedStore();
    const won = await claimOn(store);
    const lost = await claimOn(store);
    await clock.tickAsync(600);
    store.onRenew = () => Promise.resolve({ status: 'lost', record: RECORD });
    await expect(won.assertOwned()).resolves.toBe(RECORD);
    store.onRenew = () => Promise.resolve({ status: 'lost' });
    await expect(lost.assertOwned()).rejects.toThrow(EffectClaimLostError);
    expect(lost.held).toBe(false);
  });

  it('a read or renewal answered only after the lease could have run out stops the call: another attempt may hold the key', async () => {
    const store = new ScriptedStore();
    const read = await claimOn(store, 2);
    store.onGet = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return undefined;
    };
    const readChecked = read.assertOwned().catch((e: unknown) => e);
    await clock.tickAsync(1_000);
    expect(EffectClaimLostError.isInstance(await readChecked)).toBe(true);

    const renewed = await claimOn(store, 1);
    await clock.tickAsync(500);
    store.onRenew = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return { status: 'ok' };
    };
    const renewChecked = renewed.assertOwned().catch((e: unknown) => e);
    await clock.tickAsync(1_000);
    expect(EffectClaimLostError.isInstance(await renewChecked)).toBe(true);

    const quick = await claimOn(store, 2);
    store.onGet = async () => {
      await new Promise((resolve) => setTimeout(resolve, 999));
      return undefined;
    };
    const quickChecked = quick.assertOwned();
    await clock.tickAsync(999);
    await expect(quickChecked).resolves.toBeUndefined();
  });

  it("an answer after the lease could have run out that names the winner's record answers with that record", async () => {
    const store = new ScriptedStore();
    const claim = await claimOn(store, 1);
    await clock.tickAsync(500);
    store.onRenew = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return { status: 'lost', record: RECORD };
    };
    const checked = claim.assertOwned();
    await clock.tickAsync(1_000);
    await expect(checked).resolves.toBe(RECORD);
  });

  it('a lease of 0 ms has no age to outlive: its check renews it and the call goes on, however late the answer', async () => {
    const store = new ScriptedStore();
    store.claims.unshift(() => Promise.resolve(acquiredAnswer(1)));
    const claim = await Claim.acquire(store, 'k', { ...request, leaseMs: 0 }, noWait);
    if (!(claim instanceof Claim)) throw new Error('not claimed');
    store.onRenew = async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { status: 'ok' };
    };
    const checked = claim.assertOwned();
    await clock.tickAsync(50);
    await expect(checked).resolves.toBeUndefined();
    expect(store.ops()).toEqual(['claim', 'renew']);
  });

  it("a later loss without a record keeps the winner's record the claim already learned", async () => {
    const store = new ScriptedStore();
    const claim = await claimOn(store);
    claim.markLost(RECORD);
    claim.markLost();
    expect(claim.winner).toBe(RECORD);
    await expect(claim.assertOwned()).resolves.toBe(RECORD);
  });

  it('a failed read or renewal becomes an EffectStoreError naming which, and nothing is applied', async () => {
    const store = new ScriptedStore();
    store.onGet = unreachable('get');
    store.onRenew = unreachable('renew');
    const read = await (await claimOn(store)).assertOwned().catch((e: unknown) => e);
    expect(EffectStoreError.isInstance(read)).toBe(true);
    expect((read as Error).message).toMatch(/^Could not read effect "k" .*connection refused \(get\)/);
    const old = await claimOn(store);
    await clock.tickAsync(900);
    const renew = await old.assertOwned().catch((e: unknown) => e);
    expect(EffectStoreError.isInstance(renew)).toBe(true);
    expect((renew as Error).message).toMatch(/^Could not renew effect "k" .*connection refused \(renew\)/);
  });
});

describe('recording the effect under the claim', () => {
  it('answers the record the store keeps', async () => {
    const store = new ScriptedStore();
    await expect((await claimOn(store)).complete(record)).resolves.toBe(RECORD);
    expect(store.ops()).toEqual(['complete']);
  });

  it('answered ok without a record: answers nothing, writes nothing more, and the claim is still held', async () => {
    const store = new ScriptedStore();
    store.onComplete = () => Promise.resolve({ status: 'ok' });
    const claim = await claimOn(store);
    await expect(claim.complete(record)).resolves.toBeUndefined();
    expect(store.ops()).toEqual(['complete']);
    expect(claim.held).toBe(true);
  });

  it("lost with the winner's record: answers that record and writes nothing more", async () => {
    const store = new ScriptedStore();
    const theirs = { ...RECORD, result: 'theirs' };
    store.onComplete = () => Promise.resolve({ status: 'lost', record: theirs });
    const claim = await claimOn(store);
    await expect(claim.complete(record)).resolves.toBe(theirs);
    expect(store.ops()).toEqual(['complete']);
    expect(claim.held).toBe(false);
  });

  it("lost while the other attempt still works: records with a first-writer-wins put, and answers the put's winner", async () => {
    const store = new ScriptedStore();
    store.onComplete = () => Promise.resolve({ status: 'lost' });
    const claim = await claimOn(store);
    await expect(claim.complete(record)).resolves.toBe(RECORD);
    expect(store.ops()).toEqual(['complete', 'put']);
  });
});

describe('releasing a claim after a failed attempt', () => {
  it('gives the key back once and is no longer held, so nothing else runs under it', async () => {
    const store = new ScriptedStore();
    const claim = await claimOn(store);
    await claim.release({ warn: () => undefined });
    await claim.release({ warn: () => undefined });
    expect(claim.held).toBe(false);
    expect(store.ops()).toEqual(['release']);
  });

  it('does not release a claim already lost (another attempt owns the key)', async () => {
    const store = new ScriptedStore();
    const claim = await claimOn(store);
    claim.markLost();
    await claim.release({ warn: () => undefined });
    expect(store.ops()).toEqual([]);
  });

  it('a failed release is logged with the key and the error, and does not throw', async () => {
    const store = new ScriptedStore();
    store.onRelease = unreachable('release');
    const warnings: Array<{ message: string; meta: unknown }> = [];
    await (await claimOn(store)).release({ warn: (message, meta) => void warnings.push({ message, meta }) });
    expect(warnings).toEqual([
      {
        message: 'Could not release the claim on effect "k"; it frees itself when its lease expires.',
        meta: { error: 'connection refused (release)' },
      },
    ]);
  });
});
