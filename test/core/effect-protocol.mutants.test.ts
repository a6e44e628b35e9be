// Behaviours of applyEffect that the mutation run of src/effects/effect-protocol.ts found unguarded
// (`npm run mutants -- --mutate src/effects/effect-protocol.ts`, docs/reliability.md "Mutation
// testing"): what a call hands the store, what a sharer reports, and who hears that a call waited.
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  applyEffect,
  defineEffectTool,
  inputFingerprint,
  MemoryEffectStore,
  type ClaimRequest,
  type ClaimResult,
  type ClaimToken,
  type EffectRecordInput,
  type FencedResult,
} from '../../src/index.js';
import { callOptions, deferred, makeCtx, PlainStore, silentLogger } from './helpers.js';

/** A memory store that keeps what the protocol handed it. */
class SpyStore extends MemoryEffectStore {
  readonly claims: ClaimRequest[] = [];
  readonly completes: EffectRecordInput[] = [];
  override claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    this.claims.push(request);
    return super.claim(key, request);
  }
  override complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult> {
    this.completes.push(record);
    return super.complete(token, record);
  }
}

describe('what an effect call hands the store', () => {
  it('claims with the attempt, owner, lease, tool, run and input fingerprint of the call', async () => {
    const store = new SpyStore();
    const ctx = makeCtx('run-7');
    const t = defineEffectTool({ inputSchema: z.object({ n: z.number() }), execute: async () => 'ok' });
    await applyEffect(
      { tool: t, toolName: 'post', input: { n: 1 }, ctx, options: callOptions(ctx) },
      { store, attempt: 3, owner: 'owner-x', leaseMs: 4_321, logger: silentLogger },
    );
    expect(store.claims).toStrictEqual([
      {
        owner: 'owner-x',
        leaseMs: 4_321,
        toolName: 'post',
        runId: 'run-7',
        attempt: 3,
        fingerprint: inputFingerprint({ n: 1 }),
      },
    ]);
  });

  it('claims with a fresh owner token per call and a 60 s lease by default', async () => {
    const store = new SpyStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({ n: z.number() }), execute: async () => 'ok' });
    for (const n of [1, 2]) {
      await applyEffect(
        { tool: t, toolName: 't', input: { n }, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger },
      );
    }
    const [first, second] = store.claims;
    expect(first?.leaseMs).toBe(60_000);
    expect(first?.attempt).toBe(1);
    expect(typeof first?.owner).toBe('string');
    expect(first?.owner.length).toBeGreaterThan(0);
    expect(first?.owner).not.toBe(second?.owner);
  });

  it('records the fingerprint of the input for a custom key too, and none for an input canonical JSON refuses', async () => {
    const store = new SpyStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({
      inputSchema: z.object({}).passthrough(),
      effectKey: (input) => `custom:${JSON.stringify(Object.keys(input as object))}`,
      execute: async () => 'ok',
    });
    await applyEffect(
      { tool: t, toolName: 't', input: { n: 1 }, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );
    await applyEffect(
      { tool: t, toolName: 't', input: { big: 1n }, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );
    expect(store.completes.map((r) => r.fingerprint)).toStrictEqual([inputFingerprint({ n: 1 }), undefined]);
    expect(store.claims.map((r) => r.fingerprint)).toStrictEqual([inputFingerprint({ n: 1 }), undefined]);
  });

  it('records tool, run, attempt, origin and fingerprint with the result; resultUndefined only for an undefined result', async () => {
    const store = new SpyStore();
    const ctx = makeCtx('run-9');
    const t = defineEffectTool({
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }) => (n === 1 ? { posted: n } : undefined),
    });
    for (const n of [1, 2]) {
      await applyEffect(
        { tool: t, toolName: 'post', input: { n }, ctx, options: callOptions(ctx) },
        { store, attempt: 2, logger: silentLogger },
      );
    }
    expect(store.completes).toStrictEqual([
      {
        toolName: 'post',
        result: { posted: 1 },
        origin: 'executed',
        runId: 'run-9',
        attempt: 2,
        fingerprint: inputFingerprint({ n: 1 }),
      },
      {
        toolName: 'post',
        result: undefined,
        origin: 'executed',
        runId: 'run-9',
        attempt: 2,
        fingerprint: inputFingerprint({ n: 2 }),
        resultUndefined: true,
      },
    ]);
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

describe('onBusyWait', () => {
  it('hears the key once when a call waits for an identical call in flight', async () => {
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
    const busy: string[] = [];
    const go = () =>
      applyEffect(
        { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
        { store, logger: silentLogger, onBusyWait: (key) => busy.push(key) },
      );
    const running = go();
    const sharing = go();
    gate.resolve();
    const [a] = await Promise.all([running, sharing]);
    expect(busy).toStrictEqual([a.report.key]);
  });

  it("hears the key once when a call waits for another attempt's live claim, however many times it asks", async () => {
    const store = new MemoryEffectStore();
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), effectKey: () => 'held', execute: async () => 'mine' });
    // Another attempt holds the key for 200 ms and never finishes: the call asks several times.
    await store.claim('held', { owner: 'other', leaseMs: 200, toolName: 't' });
    const busy: string[] = [];
    const res = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger, busyWaitMs: 5_000, onBusyWait: (key) => busy.push(key) },
    );
    expect(res.result).toBe('mine');
    expect(busy).toStrictEqual(['held']);
  });

  it('hears nothing when the key was free', async () => {
    const busy: string[] = [];
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), execute: async () => 1 });
    await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store: new MemoryEffectStore(), logger: silentLogger, onBusyWait: (key) => busy.push(key) },
    );
    expect(busy).toStrictEqual([]);
  });
});
