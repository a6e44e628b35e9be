// The claim loop, the last ownership check and the release of src/effects/effect-lease.ts on their
// own, against a scripted store under a fake clock, for the branches the mutation run found
// unguarded (docs/reliability.md, "Mutation testing"): which store call each check makes, what a
// failed one becomes, and what each leaves in the lease.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { withGlobal } from '@sinonjs/fake-timers';
import {
  assertStillOwner,
  claimKey,
  monotonicNow,
  releaseQuietly,
  type Lease,
} from '../../src/effects/effect-lease.js';
import type { EffectRecord, IEffectStore } from '../../src/index.js';
import { EffectBusyError, EffectClaimLostError, EffectStoreError } from '../../src/errors/errors.js';
import type { ClaimResult, ClaimToken, EffectClaims, FencedResult } from '../../src/stores/effect-store.js';
import { RECORD_K as RECORD } from './helpers.js';

const TOKEN: ClaimToken = { key: 'k', owner: 'me', fence: 2 };

/** A store whose every answer the test scripts; it notes each call and when it came (fake clock). */
class ScriptedStore implements IEffectStore, EffectClaims {
  readonly calls: Array<{ op: string; at: number }> = [];
  onGet: () => Promise<EffectRecord | undefined> = () => Promise.resolve(undefined);
  onRenew: () => Promise<FencedResult> = () => Promise.resolve({ status: 'ok' });
  onRelease: () => Promise<FencedResult> = () => Promise.resolve({ status: 'ok' });
  claims: Array<() => Promise<ClaimResult>> = [];

  private note(op: string): void {
    this.calls.push({ op, at: monotonicNow() });
  }
  ops(): string[] {
    return this.calls.map((c) => c.op);
  }
  get(): Promise<EffectRecord | undefined> {
    this.note('get');
    return this.onGet();
  }
  put(): Promise<EffectRecord> {
    this.note('put');
    return Promise.resolve(RECORD);
  }
  claim(): Promise<ClaimResult> {
    this.note('claim');
    const next = this.claims.shift();
    if (next === undefined) throw new Error('ScriptedStore: no claim answer scripted');
    return next();
  }
  complete(): Promise<FencedResult> {
    this.note('complete');
    return Promise.resolve({ status: 'ok', record: RECORD });
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

const busy = (leaseRemainingMs: number) => () =>
  Promise.resolve<ClaimResult>({ status: 'busy', owner: 'other', leaseRemainingMs });
const acquired = () => Promise.resolve<ClaimResult>({ status: 'acquired', token: TOKEN, takeover: false });
const unreachable = (what: string) => () => Promise.reject(new Error(`connection refused (${what})`));

let clock: ReturnType<ReturnType<typeof withGlobal>['install']>;
beforeEach(() => {
  clock = withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => clock.uninstall());

function leaseOn(store: ScriptedStore, init: Partial<Lease> = {}): Lease {
  return { store, token: TOKEN, leaseMs: 1_000, since: monotonicNow(), lost: false, ...init };
}

const request = { owner: 'me', leaseMs: 1_000, toolName: 't' };

describe('claiming a key', () => {
  it('with busyWaitMs 0, asks once and fails busy at once instead of asking again', async () => {
    const store = new ScriptedStore();
    store.claims = [busy(5_000), acquired];
    const claimed = claimKey(store, 'k', request, 0, new AbortController().signal).catch((e: unknown) => e);
    await clock.tickAsync(100);
    expect(EffectBusyError.isInstance(await claimed)).toBe(true);
    expect(store.ops()).toEqual(['claim']);
  });

  it("asks again one millisecond after the other lease's end, never before it", async () => {
    const store = new ScriptedStore();
    store.claims = [busy(10), acquired];
    const claimed = claimKey(store, 'k', request, 10_000, new AbortController().signal);
    await clock.tickAsync(50);
    await expect(claimed).resolves.toHaveProperty('lease');
    expect(store.calls.map((c) => c.at)).toEqual([0, 11]);
  });

  it('a store that cannot be reached becomes an EffectStoreError saying the claim failed and nothing was applied', async () => {
    const store = new ScriptedStore();
    store.claims = [unreachable('claim')];
    const error = await claimKey(store, 'k', request, 10_000, new AbortController().signal).catch((e: unknown) => e);
    expect(EffectStoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^Could not claim effect "k" .*nothing was applied: connection refused/);
  });
});

describe('the last ownership check', () => {
  it('a lease already seen lost stops the call without a store round trip, even with the store down', async () => {
    const store = new ScriptedStore();
    store.onGet = unreachable('get');
    store.onRenew = unreachable('renew');
    await expect(assertStillOwner(leaseOn(store, { lost: true }))).rejects.toThrow(EffectClaimLostError);
    await expect(assertStillOwner(leaseOn(store, { lost: true, winner: RECORD }))).resolves.toBe(RECORD);
    expect(store.ops()).toEqual([]);
  });

  it("a loss the keeper learns while the read is on its way counts: the winner's record, or EffectClaimLostError", async () => {
    const store = new ScriptedStore();
    const withWinner = leaseOn(store);
    store.onGet = () => {
      Object.assign(withWinner, { lost: true, winner: RECORD });
      return Promise.resolve(undefined);
    };
    await expect(assertStillOwner(withWinner)).resolves.toBe(RECORD);

    const withoutWinner = leaseOn(store);
    store.onGet = () => {
      withoutWinner.lost = true;
      return Promise.resolve(undefined);
    };
    await expect(assertStillOwner(withoutWinner)).rejects.toThrow(EffectClaimLostError);
  });

  it('a young lease of a key claimed before (fence > 1) is read: a record found is returned and marks the lease lost', async () => {
    const store = new ScriptedStore();
    store.onGet = () => Promise.resolve(RECORD);
    const lease = leaseOn(store);
    await expect(assertStillOwner(lease)).resolves.toBe(RECORD);
    expect(lease.lost).toBe(true);
    expect(store.ops()).toEqual(['get']);
  });

  it('a lease exactly half its length old is renewed, not read', async () => {
    const store = new ScriptedStore();
    await clock.tickAsync(500);
    await expect(assertStillOwner(leaseOn(store, { since: 0 }))).resolves.toBeUndefined();
    expect(store.ops()).toEqual(['renew']);
  });

  it('a renewed lease counts from when the renewal was sent', async () => {
    const store = new ScriptedStore();
    await clock.tickAsync(800);
    const lease = leaseOn(store, { since: 0 });
    await assertStillOwner(lease);
    expect(lease.since).toBe(800);
    expect(lease.lost).toBe(false);
  });

  it('a failed read or renewal becomes an EffectStoreError naming which, and nothing is applied', async () => {
    const store = new ScriptedStore();
    store.onGet = unreachable('get');
    store.onRenew = unreachable('renew');
    const read = await assertStillOwner(leaseOn(store)).catch((e: unknown) => e);
    expect(EffectStoreError.isInstance(read)).toBe(true);
    expect((read as Error).message).toMatch(/^Could not read effect "k" .*connection refused \(get\)/);
    await clock.tickAsync(900);
    const renew = await assertStillOwner(leaseOn(store, { since: 0 })).catch((e: unknown) => e);
    expect(EffectStoreError.isInstance(renew)).toBe(true);
    expect((renew as Error).message).toMatch(/^Could not renew effect "k" .*connection refused \(renew\)/);
  });
});

describe('releasing a claim after a failed attempt', () => {
  it('gives the key back once and marks the lease lost, so nothing else runs under it', async () => {
    const store = new ScriptedStore();
    const lease = leaseOn(store);
    await releaseQuietly(lease, { warn: () => undefined });
    await releaseQuietly(lease, { warn: () => undefined });
    expect(lease.lost).toBe(true);
    expect(store.ops()).toEqual(['release']);
  });

  it('does not release a lease already lost (another attempt owns the key)', async () => {
    const store = new ScriptedStore();
    await releaseQuietly(leaseOn(store, { lost: true }), { warn: () => undefined });
    expect(store.ops()).toEqual([]);
  });

  it('a failed release is logged with the key and the error, and does not throw', async () => {
    const store = new ScriptedStore();
    store.onRelease = unreachable('release');
    const warnings: Array<{ message: string; meta: unknown }> = [];
    await releaseQuietly(leaseOn(store), { warn: (message, meta) => warnings.push({ message, meta }) });
    expect(warnings).toEqual([
      {
        message: 'Could not release the claim on effect "k"; it frees itself when its lease expires.',
        meta: { error: 'connection refused (release)' },
      },
    ]);
  });
});
