// Reliability edge cases beyond the matrix: undefined results, store read and write failures, a
// stream crashing after its effect, results that cannot travel, lease 0, clock skew between
// workers, and zombie attempts. One time-skipping environment and one workflow bundle for the file.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { defineAgent, defineEffectTool, type EffectTool, type IEffectStore } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { EffectResultNotSerializableError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ClaimRequest, ClaimResult } from '../../src/stores/effect-store.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';
import type { ToolSet } from 'ai';
import { FaultInjector } from '../../testing/fault-injector.js';
import { FlakyEffectStore } from '../../testing/flaky-store.js';
import { runAgentUnderTest } from '../../testing/run-agent-under-test.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { PG_URL, writeObservations } from './matrix.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import { firstOrTimeout } from '../fixtures/first-or-timeout.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
const table = `rel_edge_${randomUUID().slice(0, 8)}`;
const pgStores: PostgresEffectStore[] = [];
const rows: Array<{ scenario: string; expected: string; observed: string }> = [];

beforeAll(async () => {
  [env, bundle] = await Promise.all([createTimeSkippingEnvironment(), bundleTestWorkflows()]);
}, 120_000);

afterAll(async () => {
  writeObservations('edge-cases', rows);
  await Promise.all(pgStores.map((s) => s.close()));
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS public.${table}`);
  await client.end();
  await env?.teardown();
});

function pgStore(): PostgresEffectStore {
  const store = new PostgresEffectStore({ connectionString: PG_URL, table });
  pgStores.push(store);
  return store;
}

/** A PostgreSQL store that shows every answer to its claims (another instance, so no in-process sharing). */
function watchedPgStore(onClaim: (answer: ClaimResult) => void): PostgresEffectStore {
  class WatchedStore extends PostgresEffectStore {
    override async claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
      const answer = await super.claim(key, request);
      onClaim(answer);
      return answer;
    }
  }
  const store = new WatchedStore({ connectionString: PG_URL, table });
  pgStores.push(store);
  return store;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A remote that counts applications, and a tool over it (with or without reconciliation). */
function remote() {
  const applied: string[] = [];
  const tool = (opts: { reconcile?: boolean; result?: (id: string) => unknown } = {}) =>
    defineEffectTool({
      description: 'Applies an effect.',
      inputSchema: z.object({ id: z.string() }),
      ...(opts.reconcile
        ? {
            alreadyApplied: async (_key: string, { id }: { id: string }) => (applied.includes(id) ? { id } : undefined),
          }
        : {}),
      execute: async ({ id }) => {
        applied.push(id);
        return (opts.result ?? ((x: string) => ({ id: x })))(id);
      },
    });
  return { applied, tool, count: (id: string) => applied.filter((a) => a === id).length };
}

const call = (id: string) => ({ toolCalls: [{ toolName: 'effect', input: { id } }] });
const fast = { retry: { initialInterval: '10 ms', maximumInterval: '50 ms', maximumAttempts: 5 } };

function agent(tool: EffectTool<{ id: string }, unknown>, script: Parameters<typeof scriptedModel>[0], options = {}) {
  return {
    agent: defineAgent({
      name: `edge-${randomUUID().slice(0, 6)}`,
      model: scriptedModel(script),
      tools: { effect: tool as unknown as ToolSet[string] },
    }),
    tools: { effect: { ...fast, ...options } },
  };
}

function observe(scenario: string, expected: string, observed: string): void {
  rows.push({ scenario, expected, observed });
}

describe('reliability edge cases under Temporal (time-skipping)', () => {
  it('execute returns undefined: recorded as done (crash during the record too), the same call later runs nothing', async () => {
    const r = remote();
    const store = new MemoryEffectStore();
    const tool = r.tool({ result: () => undefined });
    const run = await runAgentUnderTest({
      env,
      workflowBundle: bundle,
      agents: [agent(tool, [call('u'), call('u'), { text: 'Done.' }])],
      store,
      prompt: 'go',
      faults: new FaultInjector({ point: 'during-record', attempt: 1 }),
    });
    expect(r.count('u')).toBe(1);
    expect(run.effects.map((e) => e.outcome)).toEqual(['executed', 'recorded']);
    expect(run.effects[0]?.recordPending).toBe(true);
    expect(run.counts['chamvi.recordEffect']).toBe(1);
    const record = await store.get(run.effects[0]?.key ?? '');
    expect(record?.resultUndefined).toBe(true);
    observe(
      'execute returns undefined (+ record write fails)',
      '1 effect; record resultUndefined; 2nd call recorded',
      `${r.count('u')} effect; resultUndefined=${String(record?.resultUndefined)}; outcomes ${run.effects.map((e) => e.outcome).join(',')}`,
    );
  });

  // A store with claims is read through its claim, which answers "recorded" too.
  it('store read (the claim) fails: the attempt fails closed (nothing executed), the retry applies once', async () => {
    const r = remote();
    let executedWhileStoreDown = 0;
    const inner = new MemoryEffectStore();
    const store = new FlakyEffectStore(inner, { failNext: { claim: 1 } });
    const tool = defineEffectTool({
      description: 'x',
      inputSchema: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        if (store.failures.claim === 0) executedWhileStoreDown++;
        r.applied.push(id);
        return { id };
      },
    });
    const run = await runAgentUnderTest({
      env,
      workflowBundle: bundle,
      agents: [agent(tool as unknown as EffectTool<{ id: string }, unknown>, [call('r'), { text: 'Done.' }])],
      store,
      prompt: 'go',
    });
    expect(store.failures.claim).toBe(1);
    expect(executedWhileStoreDown).toBe(0);
    expect(r.count('r')).toBe(1);
    expect(run.effects).toEqual([expect.objectContaining({ outcome: 'executed', attempts: 2 })]);
    observe(
      'store read fails once',
      'attempt 1 fails closed, nothing executed; retry executes once',
      `${r.count('r')} effect; answered by attempt ${run.effects[0]?.attempts}`,
    );
  });

  it('store down for good: the model is told, nothing is executed', async () => {
    const r = remote();
    const store = new FlakyEffectStore(new MemoryEffectStore(), { probability: { get: 1, claim: 1 } });
    const run = await runAgentUnderTest({
      env,
      workflowBundle: bundle,
      agents: [
        agent(r.tool(), [call('d'), { text: 'Gave up.' }], { retry: { initialInterval: '10 ms', maximumAttempts: 2 } }),
      ],
      store,
      prompt: 'go',
    });
    const told = JSON.stringify(run.messages.find((m) => m.role === 'tool'));
    expect(r.count('d')).toBe(0);
    expect(told).toContain('in the effect store before applying it, so nothing was applied');
    observe(
      'store read always fails',
      '0 effects; model told "nothing was applied"',
      `${r.count('d')} effects; model told: ${told.includes('nothing was applied')}`,
    );
  });

  it('store write fails: the call succeeds, chamvi.recordEffect records later (retried past a failing put)', async () => {
    const r = remote();
    const inner = new MemoryEffectStore();
    const store = new FlakyEffectStore(inner, { failNext: { complete: 1, put: 1 } });
    const run = await runAgentUnderTest({
      env,
      workflowBundle: bundle,
      agents: [agent(r.tool(), [call('w'), { text: 'Done.' }])],
      store,
      prompt: 'go',
    });
    expect(r.count('w')).toBe(1);
    expect(run.effects).toEqual([expect.objectContaining({ outcome: 'executed', attempts: 1, recordPending: true })]);
    const recordActivity = run.activities.find((a) => a.type === 'chamvi.recordEffect');
    expect(recordActivity).toEqual(expect.objectContaining({ status: 'completed', attempt: 2 }));
    expect((await inner.get(run.effects[0]?.key ?? ''))?.origin).toBe('executed');
    observe(
      'store write fails (complete, then the first put)',
      'call succeeds; recordEffect records on its retry; 1 effect',
      `${r.count('w')} effect; recordEffect attempt ${recordActivity?.attempt}; stored`,
    );
  });

  it('a streaming tool crashing mid-stream after its effect: the retry reconciles, one effect', async () => {
    const applied: string[] = [];
    const faults = new FaultInjector({ point: 'mid-stream' });
    const stream = defineEffectTool({
      description: 'Streams progress.',
      inputSchema: z.object({ id: z.string() }),
      alreadyApplied: async (_key, { id }) => (applied.includes(id) ? { id, done: true } : undefined),
      execute: async function* ({ id }) {
        yield { id, done: false };
        applied.push(id);
        await faults.at('mid-stream', id);
        yield { id, done: true };
      },
    });
    const run = await runAgentUnderTest({
      env,
      workflowBundle: bundle,
      agents: [agent(stream as unknown as EffectTool<{ id: string }, unknown>, [call('s'), { text: 'Done.' }])],
      store: new MemoryEffectStore(),
      prompt: 'go',
    });
    expect(faults.count()).toBe(1);
    expect(applied).toEqual(['s']);
    expect(run.effects).toEqual([expect.objectContaining({ outcome: 'reconciled', attempts: 2 })]);
    observe(
      'streaming tool crashes mid-stream after the effect',
      '1 effect, reconciled on retry',
      `${applied.length} effect, ${run.effects[0]?.outcome}`,
    );
  });

  it('a result that does not serialise (BigInt): clear named error, not retried, key marked done, no duplicate', async () => {
    const r = remote();
    const store = new MemoryEffectStore();
    const run = await runAgentUnderTest({
      env,
      workflowBundle: bundle,
      agents: [agent(r.tool({ result: (id) => ({ id, big: 10n }) }), [call('b'), call('b'), { text: 'Done.' }])],
      store,
      prompt: 'go',
    });
    const effectCalls = run.activities.filter((a) => a.type === 'chamvi.effectCall');
    expect(r.count('b')).toBe(1);
    expect(effectCalls.map((a) => [a.attempt, a.status])).toEqual([
      [1, 'failed'],
      [1, 'failed'],
    ]);
    expect(effectCalls[0]?.failure).toContain('cannot be serialised as JSON (BigInt at $.big');
    expect(effectCalls[1]?.failure).toContain('is recorded as done and will not be applied again');
    observe(
      'result does not serialise (BigInt)',
      'EffectResultNotSerializableError, no retry, 1 effect; same key later: same error',
      `${r.count('b')} effect; ${effectCalls.length} calls failed at attempt 1`,
    );
  });

  it('a cyclic result (outside Temporal): the same named error, naming the path', async () => {
    const r = remote();
    const tool = r.tool({
      result: (id) => {
        const o: Record<string, unknown> = { id };
        o['self'] = o;
        return o;
      },
    });
    const ctx = createToolContext({ runId: 'run-cyclic', agent: 'test' });
    const go = () =>
      applyEffect(
        { tool, toolName: 'effect', input: { id: 'c' }, ctx, options: { toolCallId: 't', messages: [], context: ctx } },
        { store: new MemoryEffectStore(), logger: { warn: () => undefined } },
      );
    await expect(go()).rejects.toThrow(EffectResultNotSerializableError);
    await expect(go()).rejects.toThrow('cyclic structure at $.self');
  });

  it('a result over the payload limit: EffectResultTooLargeError, not retried, recorded, no duplicate', async () => {
    const r = remote();
    const store = new MemoryEffectStore();
    const run = await runAgentUnderTest({
      env,
      workflowBundle: bundle,
      agents: [
        agent(r.tool({ result: (id) => ({ id, blob: 'x'.repeat(2_200_000) }) }), [call('L'), { text: 'Done.' }]),
      ],
      store,
      prompt: 'go',
    });
    const effectCall = run.activities.find((a) => a.type === 'chamvi.effectCall');
    expect(r.count('L')).toBe(1);
    expect(effectCall).toEqual(expect.objectContaining({ attempt: 1, status: 'failed' }));
    expect(effectCall?.failure).toMatch(/over Temporal's payload limit of 2097152 bytes/);
    observe(
      'result over the 2 MiB payload limit',
      'EffectResultTooLargeError, no retry, 1 effect',
      `${r.count('L')} effect; attempt ${effectCall?.attempt} ${effectCall?.status}`,
    );
  });
});

describe('leases on the database clock (PostgreSQL)', () => {
  const ctx = createToolContext({ runId: `run-${randomUUID()}`, agent: 'test' });
  const options = { toolCallId: 't', messages: [], context: ctx };
  const quiet = { warn: () => undefined };

  it('lease 0 still expires: a second attempt takes over at once instead of waiting; one effect', async () => {
    const r = remote();
    const tool = r.tool({ reconcile: true });
    const store: IEffectStore = pgStore();
    const faults = new FaultInjector({ point: 'in-already-applied', attempt: 1, mode: { stallMs: 1500 } });
    const first = applyEffect(
      { tool: faults.wrapTool('effect', tool, { attempt: 1 }), toolName: 'effect', input: { id: 'l0' }, ctx, options },
      { store, logger: quiet, leaseMs: 0, attempt: 1 },
    );
    // Attempt 1 holds the claim once it stalls in alreadyApplied (a fixed sleep here raced a slow
    // first connection on a loaded machine: attempt 1 then claimed after attempt 2 had finished).
    while (faults.count('in-already-applied') === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    const second = await applyEffect(
      { tool, toolName: 'effect', input: { id: 'l0' }, ctx, options },
      { store: pgStore(), logger: quiet, leaseMs: 0, attempt: 2 },
    );
    const tookMs = Date.now() - started;
    const late = await first;
    expect(tookMs).toBeLessThan(1000);
    expect(second.report.outcome).toBe('executed');
    expect(late.report.outcome).toBe('reconciled');
    expect(late.result).toEqual(second.result);
    expect(r.count('l0')).toBe(1);
    expect((await store.get(second.report.key))?.attempt).toBe(2);
    observe(
      'lease 0 (attempt 1 hangs holding the claim)',
      'attempt 2 not blocked; 1 effect; winner kept',
      `attempt 2 took ${tookMs} ms; ${r.count('l0')} effect; record attempt 2`,
    );
  });

  it('clock skew between workers: a worker an hour ahead neither steals nor blocks a live lease', async () => {
    const a = pgStore();
    const b = pgStore();
    const key = `skew-${randomUUID()}`;
    const request = { leaseMs: 1500, toolName: 'effect' };
    const now = Date.now.bind(Date);
    const skew = jest.spyOn(Date, 'now');
    try {
      skew.mockImplementation(() => now() - 3_600_000); // worker A is an hour behind
      const claimedA = await a.claim(key, { ...request, owner: 'A' });
      skew.mockImplementation(() => now() + 3_600_000); // worker B is an hour ahead
      const claimedB = await b.claim(key, { ...request, owner: 'B' });
      expect(claimedA.status).toBe('acquired');
      expect(claimedB.status).toBe('busy');
      await new Promise((resolve) => setTimeout(resolve, 1700)); // real (database) time passes
      const takeover = await b.claim(key, { ...request, owner: 'B' });
      expect(takeover).toEqual(expect.objectContaining({ status: 'acquired', takeover: true }));
      observe(
        'clock skew ±1 h between two workers (Date.now faked)',
        'live lease respected; expires on the DB clock',
        `B: ${claimedB.status} while live, ${takeover.status} after 1.7 s`,
      );
    } finally {
      skew.mockRestore();
    }
  });
  // Two store instances on one table: no in-process sharing between the zombie and the retry,
  // only the claim. The zombie asked the remote before it stalled (nothing there yet) and its
  // execute, deaf to the aborted signal, applies only once the retry had its chance too.
  it('a zombie still inside execute after its attempt was aborted keeps its claim past its lease (two store instances): the retry waits for it and takes its record; one effect', async () => {
    const r = remote();
    const id = 'z-late';
    const LEASE_MS = 300;
    const zombieRun = new AbortController(); // Temporal gave up on the attempt: its signal aborts
    let abortedAt = Infinity;
    zombieRun.signal.addEventListener('abort', () => (abortedAt = performance.now()));
    const zombieInside = deferred();
    const retryRefusedPastLease = deferred();
    const retryExecuting = deferred();
    let executes = 0;
    const tool = defineEffectTool({
      description: 'Applies an effect.',
      inputSchema: z.object({ id: z.string() }),
      alreadyApplied: async (_key: string, { id }: { id: string }) => (r.applied.includes(id) ? { id } : undefined),
      execute: async ({ id }) => {
        if (++executes === 1) {
          zombieInside.resolve();
          await firstOrTimeout(20_000, retryRefusedPastLease.promise, retryExecuting.promise);
        } else retryExecuting.resolve();
        r.applied.push(id);
        return { id };
      },
    });
    const zctx = createToolContext({ runId: ctx.run.runId, agent: 'test', signal: zombieRun.signal });
    const zombie = applyEffect(
      { tool, toolName: 'effect', input: { id }, ctx: zctx, options: { ...options, context: zctx } },
      { store: pgStore(), logger: quiet, leaseMs: LEASE_MS, attempt: 1 },
    );
    await zombieInside.promise;
    zombieRun.abort(new Error('start-to-close timeout'));
    const store = watchedPgStore((answer) => {
      if (answer.status === 'busy' && performance.now() >= abortedAt + LEASE_MS + 200) retryRefusedPastLease.resolve();
    });
    const winner = await applyEffect(
      { tool, toolName: 'effect', input: { id }, ctx, options },
      { store, logger: quiet, leaseMs: LEASE_MS, attempt: 2 },
    );
    const late = await zombie;
    const record = await store.get(winner.report.key);
    expect(r.count(id)).toBe(1);
    expect(winner.report.outcome).toBe('recorded');
    expect(winner.result).toEqual(late.result);
    expect(late.report.outcome).toBe('executed');
    expect(record).toEqual(expect.objectContaining({ origin: 'executed', attempt: 1 }));
    observe(
      'zombie still in execute after its signal aborted (lease 300 ms, two store instances)',
      "the claim is kept past the lease; the retry waits and takes the zombie's record; 1 effect",
      `${r.count(id)} effect; retry ${winner.report.outcome}; record ${record?.origin} attempt ${record?.attempt}`,
    );
  });

  it("a zombie that applied and then failed late: the retry waiting on its claim finds the effect through alreadyApplied, the late error stays the zombie's; one effect", async () => {
    const r = remote();
    const tool = r.tool({ reconcile: true });
    const id = 'z-throw';
    const zombieRun = new AbortController();
    const zctx = createToolContext({ runId: ctx.run.runId, agent: 'test', signal: zombieRun.signal });
    const applied = deferred();
    const retryRefused = deferred();
    const retrySettled = deferred();
    // The effect happened; the attempt fails only once the retry is waiting for its claim.
    const lateFailure = new FaultInjector({
      point: 'after-effect',
      mode: async () => {
        applied.resolve();
        await Promise.race([retryRefused.promise, retrySettled.promise]);
        throw new Error('late failure after the effect');
      },
    });
    const zombie = applyEffect(
      {
        tool: lateFailure.wrapTool('effect', tool),
        toolName: 'effect',
        input: { id },
        ctx: zctx,
        options: { ...options, context: zctx },
      },
      { store: pgStore(), logger: quiet, leaseMs: 300, attempt: 1 },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    await applied.promise;
    zombieRun.abort(new Error('start-to-close timeout'));
    const store = watchedPgStore((answer) => {
      if (answer.status === 'busy') retryRefused.resolve();
    });
    const retry = applyEffect(
      { tool, toolName: 'effect', input: { id }, ctx, options },
      { store, logger: quiet, leaseMs: 300, attempt: 2 },
    );
    const winner = await retry.finally(() => retrySettled.resolve());
    const lateError = await zombie;
    const record = await store.get(winner.report.key);
    expect(r.count(id)).toBe(1);
    expect(winner.report.outcome).toBe('reconciled');
    expect((lateError as Error).message).toBe('late failure after the effect');
    expect(record).toEqual(expect.objectContaining({ origin: 'reconciled', attempt: 2 }));
    observe(
      'zombie applies, then fails late (lease 300 ms, two store instances)',
      'the retry waits for the claim, then reconciles through alreadyApplied; 1 effect',
      `${r.count(id)} effect; retry ${winner.report.outcome}; zombie threw late; record ${record?.origin} attempt ${record?.attempt}`,
    );
  });
});
