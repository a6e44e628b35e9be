// Behaviours of the lease keeper (src/effects/lease-keeper.ts) that the mutation run found
// unguarded (docs/reliability.md, "Mutation testing"): how often a held lease is renewed while
// execute runs, that it stops with the call, and what a failed renewal or release does.
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { defineEffectTool } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ClaimToken, FencedResult } from '../../src/stores/effect-store.js';
import { callOptions, captureLogger, makeCtx, silentLogger } from './helpers.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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

describe('the lease keeper', () => {
  it('renews a held lease about every third of its length while execute runs, and not once the call returned', async () => {
    const store = new RenewStore();
    const seen: { atStart?: number; atEnd?: number } = {};
    const ctx = makeCtx('r');
    await applyEffect(
      { tool: slowTool(store, 2_000, seen), toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, leaseMs: 300, logger: silentLogger },
    );
    const during = (seen.atEnd ?? 0) - (seen.atStart ?? 0);
    // Due at 100 ms of age, ticks every 50 ms: a renewal every 100-150 ms, 13-20 in 2 s (due at
    // half the lease it would be 8-10, at every tick 40).
    expect(during).toBeGreaterThanOrEqual(11);
    expect(during).toBeLessThanOrEqual(24);
    const after = store.renews;
    await sleep(500);
    expect(store.renews).toBe(after);
  });

  it('keeps a lease alive through a failed renewal: it logs it and renews again on a later tick', async () => {
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
    // Two failures, then renewals that succeed: the claim was still this attempt's when it completed.
    expect((seen.atEnd ?? 0) - (seen.atStart ?? 0)).toBeGreaterThanOrEqual(4);
    expect((await store.get(res.report.key))?.origin).toBe('executed');
  });

  it('never renews a lease of 0 ms while execute runs', async () => {
    const store = new RenewStore();
    const seen: { atStart?: number; atEnd?: number } = {};
    const ctx = makeCtx('r');
    await applyEffect(
      { tool: slowTool(store, 300, seen), toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, leaseMs: 0, logger: silentLogger },
    );
    expect(seen.atEnd).toBe(seen.atStart);
  });

  it('past abortGraceMs it releases the claim of a cancelled, hung execute, and logs a release that failed', async () => {
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
});
