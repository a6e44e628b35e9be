// The lease keeper's one timer must not keep a worker process alive (src/effects/lease-keeper.ts,
// found unguarded by the mutation run). On real timers, in a file of its own: the keeper is one per
// module instance, so here it is idle when the test starts.
import { expect, it } from '@jest/globals';
import { monotonicNow, type Lease } from '../../src/effects/effect-lease.js';
import { keepLease } from '../../src/effects/lease-keeper.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';

it("the keeper's timer does not keep the process alive while it renews a lease", async () => {
  // Resources keeping the event loop alive; an unref'd timer is not one of them.
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const store = new MemoryEffectStore();
  const claimed = await store.claim('k', { owner: 'me', leaseMs: 600, toolName: 't' });
  if (claimed.status !== 'acquired') throw new Error(`claim: ${claimed.status}`);
  const lease: Lease = { store, token: claimed.token, leaseMs: 600, since: monotonicNow(), lost: false };
  const before = timers();
  const kept = keepLease(lease, new AbortController().signal, 60_000, { warn: () => undefined });
  expect(timers()).toBe(before);
  kept?.stop();
});
