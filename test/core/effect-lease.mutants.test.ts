// Behaviours of the claim loop and the last ownership check (src/effects/effect-lease.ts) that the
// mutation run found unguarded (docs/reliability.md, "Mutation testing"): how a call waits for
// another attempt's live claim, and when it stops waiting.
import { describe, expect, it } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { defineEffectTool } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { EffectBusyError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ClaimRequest, ClaimResult } from '../../src/stores/effect-store.js';
import { callOptions, makeCtx, silentLogger } from './helpers.js';

/** A memory store that counts the claims it was asked for. */
class CountingStore extends MemoryEffectStore {
  claims = 0;
  override claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    this.claims++;
    return super.claim(key, request);
  }
}

function keyedTool(runs: { n: number }) {
  return defineEffectTool({
    inputSchema: z.object({}),
    effectKey: () => 'held',
    execute: async () => ++runs.n,
  });
}

describe("waiting for another attempt's live claim", () => {
  it('stops at once with the abort reason when the waiting call is cancelled, and applies nothing', async () => {
    const store = new MemoryEffectStore();
    await store.claim('held', { owner: 'other', leaseMs: 30_000, toolName: 't' });
    const runs = { n: 0 };
    const cancel = new AbortController();
    const reason = new Error('attempt cancelled');
    const ctx = makeCtx('r', { signal: cancel.signal });
    const started = performance.now();
    setTimeout(() => cancel.abort(reason), 100);
    await expect(
      applyEffect(
        { tool: keyedTool(runs), toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger, busyWaitMs: 20_000 },
      ),
    ).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(runs.n).toBe(0);
  });

  it('asks again with pauses that grow from 25 ms, not in a tight loop and not once', async () => {
    const store = new CountingStore();
    await store.claim('held', { owner: 'other', leaseMs: 30_000, toolName: 't' });
    const ctx = makeCtx('r');
    const error = await applyEffect(
      { tool: keyedTool({ n: 0 }), toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger, busyWaitMs: 800 },
    ).catch((e: unknown) => e);
    expect(EffectBusyError.isInstance(error)).toBe(true);
    // Asks at 0, 25, 75, 175, 375, 775 and 800 ms (pauses of 25 ms doubling up to 500, the last one
    // cut to what is left of the wait): 7. Pauses of 500 ms at once would ask 4 times, no pause 100s.
    expect(store.claims - 1).toBeGreaterThanOrEqual(5);
    expect(store.claims - 1).toBeLessThanOrEqual(9);
  });

  it('takes the key as soon as the other lease expires, not a whole pause later', async () => {
    const store = new MemoryEffectStore();
    const runs = { n: 0 };
    await store.claim('held', { owner: 'other', leaseMs: 1_000, toolName: 't' });
    const ctx = makeCtx('r');
    const started = performance.now();
    const res = await applyEffect(
      { tool: keyedTool(runs), toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger, busyWaitMs: 10_000 },
    );
    const took = performance.now() - started;
    expect(res.report.outcome).toBe('executed');
    // Pauses of 25 … 400 ms end at 775 ms; the next one is cut to the lease's end (1 000 ms),
    // where a full 500 ms pause would end at 1 275 ms.
    expect(took).toBeGreaterThanOrEqual(990);
    expect(took).toBeLessThan(1_200);
  });

  it('gives up after busyWaitMs, not a whole pause later, with the time it waited', async () => {
    const store = new MemoryEffectStore();
    await store.claim('held', { owner: 'other', leaseMs: 30_000, toolName: 't' });
    const ctx = makeCtx('r');
    const started = performance.now();
    const error = await applyEffect(
      { tool: keyedTool({ n: 0 }), toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger, busyWaitMs: 1_000 },
    ).catch((e: unknown) => e);
    const took = performance.now() - started;
    expect(EffectBusyError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/\b1\d{3} ?ms\b/);
    // Pauses of 25 … 400 ms end at 775 ms; the last one is cut to what is left of the wait.
    expect(took).toBeGreaterThanOrEqual(990);
    expect(took).toBeLessThan(1_200);
  });
});
