// Identical calls in flight in one process (same store, same key) share one application: what a
// sharer reports, and how long and how it waits (src/effects/shared-call.ts, in-flight.ts).
import { describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { z } from 'zod';
import { defineEffectTool } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { EffectBusyError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { awaitSharedCall } from '../../src/effects/shared-call.js';
import { callOptions, deferred, makeCtx, PlainStore, silentLogger } from './helpers.js';

describe('a call waiting for an identical call in flight', () => {
  it('fails with an EffectBusyError naming the key and about how long it waited', async () => {
    const gate = deferred();
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => 'shared-key',
      execute: async () => {
        await gate.promise;
        return 'posted';
      },
    });
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const go = (busyWaitMs: number) =>
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger, busyWaitMs },
      );
    const running = go(10_000);
    const error = await go(400).catch((e: unknown) => e);
    expect(EffectBusyError.isInstance(error)).toBe(true);
    expect((error as EffectBusyError).key).toBe('shared-key');
    const waited = Number(/after waiting (\d+) ms/.exec((error as Error).message)?.[1]);
    expect(waited).toBeGreaterThanOrEqual(390);
    expect(waited).toBeLessThan(1_500);
    gate.resolve();
    await running;
  });

  it("shares the running call's failure as it is", async () => {
    const gate = deferred();
    const failure = new Error('remote said no');
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        await gate.promise;
        throw failure;
      },
    });
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const go = () =>
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger },
      );
    const running = go();
    const sharing = go();
    gate.resolve();
    await expect(running).rejects.toBe(failure);
    await expect(sharing).rejects.toBe(failure);
  });

  it('leaves no abort listener on its signal once it settled: resolved, failed or given up', async () => {
    const store = new MemoryEffectStore();
    const waiting = new AbortController();
    const run = async (outcome: 'resolve' | 'fail' | 'busy') => {
      const gate = deferred();
      const t = defineEffectTool({
        inputSchema: z.object({}),
        effectKey: () => `k-${outcome}`,
        execute: async (): Promise<string> => {
          await gate.promise;
          if (outcome === 'fail') throw new Error('failed');
          return 'ok';
        },
      });
      const go = (ctx: ReturnType<typeof makeCtx>, busyWaitMs: number) =>
        applyEffect(
          { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
          { store, logger: silentLogger, busyWaitMs },
        );
      const running = go(makeCtx('r'), 10_000);
      const sharing = go(makeCtx('r', { signal: waiting.signal }), outcome === 'busy' ? 50 : 10_000);
      expect(getEventListeners(waiting.signal, 'abort')).toHaveLength(1);
      if (outcome === 'busy') {
        // Given up while the running call goes on: the listener goes with the wait, not with the call.
        await sharing.catch(() => undefined);
        expect(getEventListeners(waiting.signal, 'abort')).toHaveLength(0);
      }
      gate.resolve();
      await Promise.allSettled([running, sharing]);
      expect(getEventListeners(waiting.signal, 'abort')).toHaveLength(0);
    };
    await run('resolve');
    await run('fail');
    await run('busy');
  });

  it('leaves no timer pending once it settled: resolved, failed or aborted', async () => {
    // A timer left pending holds the worker's event loop open for up to busyWaitMs after the wait ended.
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const resolved = deferred();
    const waitResolved = awaitSharedCall(resolved.promise, 'k', 600_000, new AbortController().signal);
    expect(timers()).toBe(before + 1);
    resolved.resolve();
    await waitResolved;
    expect(timers()).toBe(before);

    let fail!: (error: Error) => void;
    const failed = new Promise((_, reject) => (fail = reject));
    const waitFailed = awaitSharedCall(failed, 'k', 600_000, new AbortController().signal);
    fail(new Error('failed'));
    await expect(waitFailed).rejects.toThrow('failed');
    expect(timers()).toBe(before);

    const cancel = new AbortController();
    const waitAborted = awaitSharedCall(new Promise(() => undefined), 'k', 600_000, cancel.signal);
    cancel.abort(new Error('cancelled'));
    await expect(waitAborted).rejects.toThrow('cancelled');
    expect(timers()).toBe(before);
  });
});

describe('a call that shares an identical call in flight', () => {
  it('reports its own toolCallId and attempt, outcome recorded, and the shared key and tool', async () => {
    const gate = deferred();
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        await gate.promise;
        return 'posted';
      },
    });
    const store = new PlainStore();
    const ctx = makeCtx('r');
    const running = applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx, { toolCallId: 'first' }) },
      { store, logger: silentLogger },
    );
    const sharing = applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx, { toolCallId: 'second' }) },
      { store, attempt: 4, logger: silentLogger },
    );
    gate.resolve();
    const [a, b] = await Promise.all([running, sharing]);
    expect(b.result).toBe('posted');
    expect(b.report).toStrictEqual({
      key: a.report.key,
      toolName: 't',
      toolCallId: 'second',
      outcome: 'recorded',
      attempts: 4,
    });
    expect(a.report).toMatchObject({ toolCallId: 'first', outcome: 'executed', attempts: 1 });
  });

  it('waits 10 s by default before it gives up on the running call', async () => {
    const gate = deferred();
    const t = defineEffectTool({
      inputSchema: z.object({}),
      execute: async () => {
        await gate.promise;
        return 'posted';
      },
    });
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const go = () =>
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger },
      );
    const running = go();
    const sharing = go();
    let settled = false;
    void sharing.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Well below the default wait: the sharer is still waiting, not failed.
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false);
    gate.resolve();
    await expect(sharing).resolves.toMatchObject({ result: 'posted' });
    await running;
  });
});
