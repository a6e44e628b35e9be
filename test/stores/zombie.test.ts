import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { z } from 'zod';
import { defineEffectTool, effectFenceOf, type IEffectStore } from '../../src/index.js';
import { applyEffect, type EffectCall } from '../../src/effects/effect-protocol.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { EffectClaimLostError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { EffectClaims } from '../../src/stores/effect-store.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';

// Two attempts of one effect activity, as Temporal runs them after a start-to-close timeout:
// attempt A stalls past its lease, attempt B takes over. Without Temporal: two store handles on
// the same data (two workers), the real protocol, real short leases on the store's clock.

const PG_URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const LEASE = 120;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const dir = mkdtempSync(join(tmpdir(), 'chamvi-zombie-'));
const schema = `chamvi_zombie_${process.pid}`;
const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
let tables = 0;
const logger = { warn: () => undefined };

type Store = IEffectStore & EffectClaims;
/** A second handle on the same store object, so in-process call sharing does not merge the attempts. */
const handle = (s: Store, override: Partial<Store> = {}): Store => ({
  get: (k) => s.get(k),
  put: (k, r) => s.put(k, r),
  claim: (k, r) => s.claim(k, r),
  complete: (t, r) => s.complete(t, r),
  release: (t) => s.release(t),
  renew: (t, ms) => s.renew(t, ms),
  ...override,
});

const backends: [string, () => [ManagedEffectStore, ManagedEffectStore]][] = [
  [
    'memory',
    () => {
      // The store's own clock, as a database server's: a test stepping this process's wall clock does not move it.
      const s = new MemoryEffectStore({ now: () => performance.timeOrigin + performance.now() });
      return [s, s];
    },
  ],
  [
    'SQLite',
    () => {
      const path = join(dir, `z${++tables}.db`);
      return [new SqliteEffectStore(path), new SqliteEffectStore(path)];
    },
  ],
  [
    'PostgreSQL',
    () => {
      const table = `z${++tables}`;
      return [
        new PostgresEffectStore({ connectionString: PG_URL, schema, table, pool: { max: 2 } }),
        new PostgresEffectStore({ connectionString: PG_URL, schema, table, pool: { max: 2 } }),
      ];
    },
  ],
];

/** A remote system with markers, an effect tool on it, and a counter of applications. */
function world(stall: {
  inAlreadyApplied?: number;
  /** The first alreadyApplied call returns only once this settles (a barrier instead of a sleep). */
  checkGate?: Promise<unknown>;
  /** Which alreadyApplied call (1-based) stalls for `inAlreadyApplied`. Default 1. */
  slowCheck?: number;
  inExecute?: number;
  /** Stall inside execute before the remote write, as a slow HTTP call that ignores its abort signal. */
  beforeWrite?: number;
  after?: () => void;
  onEffect?: () => void;
  onExecute?: (options: object) => void;
  /** No alreadyApplied at all: only the claim keeps a second attempt from applying. */
  noCheck?: boolean;
}) {
  const remote = new Map<string, string>();
  let applied = 0;
  let alreadyAppliedCalls = 0;
  const tool = defineEffectTool({
    description: 'Posts a comment.',
    inputSchema: z.object({ body: z.string() }),
    effectKey: () => 'run-z:comment:1',
    ...(stall.noCheck
      ? {}
      : {
          alreadyApplied: async (key: string) => {
            const seen = remote.get(key); // looked up before a possible stall, like a slow remote read
            if (alreadyAppliedCalls === 0 && stall.checkGate) await stall.checkGate;
            if (++alreadyAppliedCalls === (stall.slowCheck ?? 1) && stall.inAlreadyApplied) {
              await sleep(stall.inAlreadyApplied);
              stall.after?.();
            }
            return seen === undefined ? undefined : { id: seen, body: 'hello' };
          },
        }),
    execute: async ({ body }, options) => {
      stall.onExecute?.(options);
      if (applied === 0 && stall.beforeWrite) await sleep(stall.beforeWrite);
      applied++;
      const id = `comment-${applied}`;
      remote.set('run-z:comment:1', id);
      stall.onEffect?.();
      if (applied === 1 && stall.inExecute) await sleep(stall.inExecute);
      return { id, body };
    },
  });
  const call = (id: string, signal?: AbortSignal): EffectCall => {
    const ctx = createToolContext({ runId: 'run-z', agent: 'zombie', ...(signal ? { signal } : {}) });
    return {
      tool: tool as EffectCall['tool'],
      toolName: 'comment',
      input: { body: 'hello' },
      ctx,
      options: { toolCallId: id, messages: [], context: ctx },
    };
  };
  return { call, applied: () => applied, remote };
}

describe.each(backends)('zombie attempts on the %s store', (_name, open) => {
  const opened: ManagedEffectStore[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });

  it('a live attempt keeps renewing its lease through a slow execute, so the next attempt waits for its record', async () => {
    const [a, b] = open();
    opened.push(a, b);
    let effectApplied = (): void => undefined;
    const applying = new Promise<void>((resolve) => (effectApplied = resolve));
    const w = world({ inExecute: LEASE * 4, onEffect: () => effectApplied() });
    const first = applyEffect(w.call('a'), { store: handle(a), attempt: 1, owner: 'A', leaseMs: LEASE, logger });
    // Without renewals, A's lease would be gone by the time B claims.
    await applying;
    await sleep(LEASE * 1.5);
    const second = await applyEffect(w.call('b'), {
      store: handle(b),
      attempt: 2,
      owner: 'B',
      leaseMs: 10_000,
      busyWaitMs: 10_000,
    });
    expect((await first).report.outcome).toBe('executed');
    expect(second.report.outcome).toBe('recorded');
    expect(second.result).toEqual({ id: 'comment-1', body: 'hello' });
    expect(w.applied()).toBe(1);
  });

  it('a cancelled attempt whose execute ignores its signal keeps its claim until execute returns: the next attempt waits and gets its record', async () => {
    const [a, b] = open();
    opened.push(a, b);
    const cancelled = new AbortController();
    let executing = (): void => undefined;
    const started = new Promise<void>((resolve) => (executing = resolve));
    // No remote check: only the claim can keep B from posting beside A's slow, signal-deaf call.
    const w = world({ noCheck: true, beforeWrite: LEASE * 5, onExecute: () => executing() });
    const first = applyEffect(w.call('a', cancelled.signal), {
      store: handle(a),
      attempt: 1,
      owner: 'A',
      leaseMs: LEASE,
      logger,
    });
    await started;
    cancelled.abort(); // a cancel (or the start-to-close timeout) while the HTTP call is in flight
    await sleep(LEASE * 2);
    const second = await applyEffect(w.call('b'), {
      store: handle(b),
      attempt: 2,
      owner: 'B',
      leaseMs: 10_000,
      busyWaitMs: 10_000,
    });
    expect((await first).report.outcome).toBe('executed');
    expect(second.report.outcome).toBe('recorded');
    expect(second.result).toEqual({ id: 'comment-1', body: 'hello' });
    expect(w.applied()).toBe(1);
  });

  it('past abortGraceMs a cancelled, hung execute gives its claim up with a warning, so the key is not blocked forever', async () => {
    const [a, b] = open();
    opened.push(a, b);
    const warnings: string[] = [];
    // Aborted once execute runs (an abort before it would stop the call at its last check).
    const live = new AbortController();
    const w2 = world({ noCheck: true, beforeWrite: LEASE * 12, onExecute: () => live.abort() });
    const first = applyEffect(w2.call('a', live.signal), {
      store: handle(a),
      attempt: 1,
      owner: 'A',
      leaseMs: LEASE,
      abortGraceMs: LEASE * 2,
      logger: { warn: (message: string) => void warnings.push(message) },
    });
    await sleep(LEASE * 5);
    expect(warnings.join('\n')).toMatch(
      /still running .* after its attempt was cancelled or timed out; its claim is released/,
    );
    const second = await applyEffect(w2.call('b'), { store: handle(b), attempt: 2, owner: 'B', leaseMs: 10_000 });
    // The documented cost of the cap: the key was given up, so the retry applies the effect too.
    expect(second.report.outcome).toBe('executed');
    await first;
    expect(w2.applied()).toBe(2);
  });

  it("a late attempt's put ends a live claim, and that attempt's last check before execute finds the record instead of applying", async () => {
    const [a, b] = open();
    opened.push(a, b);
    // A timed out: its renewals stop reaching the store while its slow execute is still on the way.
    const w = world({ beforeWrite: LEASE * 3, inAlreadyApplied: LEASE * 6, slowCheck: 2 });
    const zombie = handle(a, { renew: async () => ({ status: 'ok' }) });
    const first = applyEffect(w.call('a'), { store: zombie, attempt: 1, owner: 'A', leaseMs: LEASE, logger });
    await sleep(LEASE * 1.5);
    // B takes the expired key over with a long lease, then reads the remote (nothing yet) and is slow.
    const second = applyEffect(w.call('b'), {
      store: handle(b),
      attempt: 2,
      owner: 'B',
      leaseMs: 10_000,
      logger,
    });
    const late = await first; // A's effect lands, its complete is lost, its put records it and ends B's claim
    expect(late.report.outcome).toBe('executed');
    const answer = await second;
    expect(answer.report.outcome).toBe('recorded');
    expect(answer.result).toEqual({ id: 'comment-1', body: 'hello' });
    expect(w.applied()).toBe(1);
  });

  it("execute receives the claim's fence number, and a takeover of the key raises it", async () => {
    const [a, b] = open();
    opened.push(a, b);
    const fences: (number | undefined)[] = [];
    const w = world({
      noCheck: true,
      beforeWrite: LEASE * 3,
      onExecute: (options) => fences.push(effectFenceOf(options)),
    });
    // A's renewals never reach the store, so B takes the key over while A is still inside execute.
    const first = applyEffect(w.call('a'), {
      store: handle(a, { renew: async () => ({ status: 'ok' }) }),
      attempt: 1,
      owner: 'A',
      leaseMs: LEASE,
      logger,
    });
    await sleep(LEASE * 1.5);
    await applyEffect(w.call('b'), { store: handle(b), attempt: 2, owner: 'B', leaseMs: 10_000, logger });
    await first;
    expect(fences).toHaveLength(2);
    expect(typeof fences[0]).toBe('number');
    expect(fences[1]).toBeGreaterThan(fences[0] as number);
  });

  it.each([
    ['', 0],
    [' even with the wall clock stepped back an hour', -3_600_000],
  ])(
    'an attempt that stalls past its lease before the effect learns it lost on renew and does not apply%s',
    async (_clock, stepMs) => {
      const [a, b] = open();
      opened.push(a, b);
      // While A stalls its renewals (heartbeats) do not reach the store, as when its worker is
      // partitioned: they fail. The renew right before the effect does reach it. B is still
      // applying the effect then, so A finds no record to take.
      let partitioned = true;
      const wall = Date.now.bind(Date);
      const w = world({
        inAlreadyApplied: LEASE * 3,
        beforeWrite: LEASE * 6,
        after: () => {
          partitioned = false;
          if (stepMs !== 0) jest.spyOn(Date, 'now').mockImplementation(() => wall() + stepMs);
        },
      });
      const zombie = handle(a, {
        renew: async (token, ms) => {
          if (partitioned) throw new Error('network partition: the store is unreachable');
          return a.renew(token, ms);
        },
      });
      const first = applyEffect(w.call('a'), { store: zombie, attempt: 1, owner: 'A', leaseMs: LEASE, logger });
      const failed = first.catch((e: unknown) => e);
      await sleep(LEASE * 1.5);
      const second = applyEffect(w.call('b'), { store: handle(b), attempt: 2, owner: 'B', leaseMs: 10_000 });
      const error = await failed;
      jest.restoreAllMocks();
      expect(EffectClaimLostError.isInstance(error)).toBe(true);
      expect((await second).report.outcome).toBe('executed');
      expect(w.applied()).toBe(1);
      expect((await b.get('run-z:comment:1'))?.attempt).toBe(2);
    },
  );

  it('an attempt frozen inside execute (heartbeats lost) is reconciled by the next attempt, and its late complete loses', async () => {
    const [a, b] = open();
    opened.push(a, b);
    const w = world({ inExecute: LEASE * 3 });
    // A's renewals never reach the store, as when its worker is partitioned away.
    const frozen = handle(a, { renew: async () => ({ status: 'ok' }) });
    const first = applyEffect(w.call('a'), { store: frozen, attempt: 1, owner: 'A', leaseMs: LEASE, logger });
    await sleep(LEASE * 1.5);
    const second = await applyEffect(w.call('b'), { store: handle(b), attempt: 2, owner: 'B', leaseMs: 10_000 });
    expect(second.report.outcome).toBe('reconciled');
    expect(second.result).toEqual({ id: 'comment-1', body: 'hello' });
    const late = await first;
    // A applied the effect itself, but the store keeps B's record and A hands back the winner's result.
    expect(late.result).toEqual({ id: 'comment-1', body: 'hello' });
    expect(w.applied()).toBe(1);
    expect(await b.get('run-z:comment:1')).toMatchObject({ origin: 'reconciled', attempt: 2 });
  });
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

describe('a loss the lease keeper saw', () => {
  it("stops the effect even while the lease still looks young on this process's clock", async () => {
    // The store's clock jumps ahead (a database failover to a host whose clock runs ahead): A's lease
    // is gone on the store while it still looks young here. B takes the key and is slow to apply.
    let skew = 0;
    const store = new MemoryEffectStore({ now: () => Date.now() + skew });
    let sawLoss = (): void => undefined;
    const lossSeen = new Promise<void>((resolve) => (sawLoss = resolve));
    // A asks the remote until its keeper has seen the loss, then goes on at once: its lease is then
    // a third of its length old, younger than the half that would force a renew before the effect.
    const w = world({ checkGate: lossSeen, beforeWrite: LEASE * 8 });
    const leaseMs = LEASE * 6;
    const first = applyEffect(w.call('a'), {
      store: handle(store),
      attempt: 1,
      owner: 'A',
      leaseMs,
      logger: { warn: (message: string) => (/Lost the claim/.test(message) ? sawLoss() : undefined) },
    });
    const failed = first.catch((e: unknown) => e);
    await sleep(LEASE / 2);
    skew = leaseMs * 2;
    const second = applyEffect(w.call('b'), { store: handle(store), attempt: 2, owner: 'B', leaseMs: 60_000, logger });
    const error = await failed;
    expect(EffectClaimLostError.isInstance(error)).toBe(true);
    expect((await second).report.outcome).toBe('executed');
    expect(w.applied()).toBe(1);
  });
});
