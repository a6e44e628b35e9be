// What the effect protocol tells its observer (EffectEnv.observe), path by path: the events the
// effect spans are made of.
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { defineEffectTool } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { IEffectStore } from '../../src/stores/effect-store.js';
import type { EffectEvent } from '../../src/effects/effect-event.js';
import { callOptions, FlakyStore, makeCtx, silentLogger } from './helpers.js';

async function observed(
  store: IEffectStore,
  tool: { alreadyApplied?: () => Promise<unknown>; execute: () => Promise<unknown> },
  busyWaitMs = 2_000,
): Promise<{ events: EffectEvent[]; outcome: unknown }> {
  const events: EffectEvent[] = [];
  const ctx = makeCtx('run-events');
  const t = defineEffectTool({ inputSchema: z.object({}), effectKey: () => 'k', ...tool });
  const outcome = await applyEffect(
    { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
    { store, logger: silentLogger, busyWaitMs, observe: (event) => events.push(event) },
  ).then(
    (r) => r.report.outcome,
    (error: unknown) => error,
  );
  return { events, outcome };
}

describe('the effect protocol as its observer sees it', () => {
  it('a new key: claim acquired (fence 1), alreadyApplied nothing, execute start and end, record done', async () => {
    const { events, outcome } = await observed(new MemoryEffectStore(), {
      alreadyApplied: async () => undefined,
      execute: async () => 1,
    });
    expect(outcome).toBe('executed');
    expect(events).toEqual([
      { type: 'claim', result: 'acquired', fence: 1 },
      { type: 'alreadyApplied', result: 'nothing' },
      { type: 'execute', phase: 'start' },
      { type: 'execute', phase: 'end' },
      { type: 'record', result: 'done' },
    ]);
  });

  it('a throwing execute ends with its error and records nothing; a tool without alreadyApplied has no such event', async () => {
    const failure = new Error('remote refused');
    const { events, outcome } = await observed(new MemoryEffectStore(), {
      execute: () => Promise.reject(failure),
    });
    expect(outcome).toBe(failure);
    expect(events).toEqual([
      { type: 'claim', result: 'acquired', fence: 1 },
      { type: 'execute', phase: 'start' },
      { type: 'execute', phase: 'end', error: failure },
    ]);
  });

  it('a record write that fails after the effect is pending', async () => {
    const store = new FlakyStore();
    store.failWrites = 1;
    const { events, outcome } = await observed(store, { execute: async () => 1 });
    expect(outcome).toBe('executed');
    expect(events.at(-1)).toEqual({ type: 'record', result: 'pending' });
    expect(events).not.toContainEqual({ type: 'record', result: 'done' });
  });

  it('found remotely: no execute; the key of an expired lease is taken over with a higher fence', async () => {
    const store = new MemoryEffectStore();
    await store.claim('k', { owner: 'dead-attempt', leaseMs: 1, toolName: 't', runId: 'run-events', attempt: 1 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const { events, outcome } = await observed(store, {
      alreadyApplied: async () => ({ id: 1 }),
      execute: async () => 2,
    });
    expect(outcome).toBe('reconciled');
    expect(events).toEqual([
      { type: 'claim', result: 'takeover', fence: 2 },
      { type: 'alreadyApplied', result: 'found' },
      { type: 'record', result: 'done' },
    ]);
  });

  it("another attempt's live claim is waited for (busy, once), then the key is claimed when it is released", async () => {
    const store = new MemoryEffectStore();
    const held = await store.claim('k', {
      owner: 'other',
      leaseMs: 60_000,
      toolName: 't',
      runId: 'run-events',
      attempt: 1,
    });
    if (held.status !== 'acquired') throw new Error('the other attempt should hold the key');
    setTimeout(() => void store.release(held.token), 200);
    const { events, outcome } = await observed(store, { execute: async () => 1 });
    expect(outcome).toBe('executed');
    expect(events.slice(0, 2)).toEqual([
      { type: 'claim', result: 'busy' },
      { type: 'claim', result: 'acquired', fence: 2 },
    ]);
  });

  it('an observer that throws changes nothing: the effect is applied once and recorded, and the throw is logged', async () => {
    const store = new MemoryEffectStore();
    const ctx = makeCtx('run-observer-throws');
    const applied: number[] = [];
    const t = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => 'k',
      execute: async () => {
        applied.push(applied.length + 1);
        return applied.length;
      },
    });
    const warnings: string[] = [];
    const env = {
      store,
      logger: { warn: (message: string) => warnings.push(message) },
      observe: (event: EffectEvent) => {
        if (event.type === 'execute' && event.phase === 'end') throw new Error('span exporter down');
      },
    };
    const call = { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) };
    const first = await applyEffect(call, env);
    const second = await applyEffect(call, env);
    expect([first.report.outcome, second.report.outcome]).toEqual(['executed', 'recorded']);
    expect(applied).toEqual([1]);
    expect((await store.get('k'))?.result).toBe(1);
    expect(warnings).toEqual(['An effect observer threw; the call goes on without it.']);
  });

  it('an observer that throws at every event still lets a failed record write succeed as pending and give the key back', async () => {
    const store = new FlakyStore();
    store.failWrites = 1;
    const ctx = makeCtx('run-observer-pending');
    const t = defineEffectTool({ inputSchema: z.object({}), effectKey: () => 'k', execute: async () => 1 });
    const resolved = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      {
        store,
        logger: silentLogger,
        busyWaitMs: 0,
        onRecordFailed: () => {
          throw new Error('metrics down');
        },
        observe: () => {
          throw new Error('exporter down');
        },
      },
    );
    expect(resolved.unrecorded?.key).toBe('k');
    expect(resolved.report.recordPending).toBe(true);
    // Given back: a claim right away is not busy.
    await expect(store.claim('k', { owner: 'next', leaseMs: 60_000, toolName: 't' })).resolves.toMatchObject({
      status: 'acquired',
    });
  });
});
