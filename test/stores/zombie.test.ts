import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { z } from 'zod';
import {
  applyEffect,
  createToolContext,
  defineEffectTool,
  EffectClaimLostError,
  MemoryEffectStore,
  PostgresEffectStore,
  SqliteEffectStore,
  type EffectCall,
  type EffectClaims,
  type IEffectStore,
  type ManagedEffectStore,
} from '../../src/index.js';

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
      const s = new MemoryEffectStore();
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
function world(stall: { inAlreadyApplied?: number; inExecute?: number; after?: () => void; onEffect?: () => void }) {
  const remote = new Map<string, string>();
  let applied = 0;
  let alreadyAppliedCalls = 0;
  const tool = defineEffectTool({
    description: 'Posts a comment.',
    inputSchema: z.object({ body: z.string() }),
    effectKey: () => 'run-z:comment:1',
    alreadyApplied: async (key) => {
      const seen = remote.get(key); // looked up before a possible stall, like a slow remote read
      if (++alreadyAppliedCalls === 1 && stall.inAlreadyApplied) {
        await sleep(stall.inAlreadyApplied);
        stall.after?.();
      }
      return seen === undefined ? undefined : { id: seen, body: 'hello' };
    },
    execute: async ({ body }) => {
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

  it("a cancelled attempt's lease is no longer renewed, so the next attempt takes the key over and reconciles", async () => {
    const [a, b] = open();
    opened.push(a, b);
    const cancelled = new AbortController();
    let effectApplied = (): void => undefined;
    const applying = new Promise<void>((resolve) => (effectApplied = resolve));
    // Cancelled once its effect is applied and execute still runs, as a cancellation delivered by heartbeat.
    const w = world({
      inExecute: LEASE * 5,
      onEffect: () => {
        cancelled.abort();
        effectApplied();
      },
    });
    const first = applyEffect(w.call('a', cancelled.signal), {
      store: handle(a),
      attempt: 1,
      owner: 'A',
      leaseMs: LEASE,
      logger,
    });
    await applying;
    await sleep(LEASE * 2);
    const second = await applyEffect(w.call('b'), { store: handle(b), attempt: 2, owner: 'B', leaseMs: 10_000 });
    expect(second.report.outcome).toBe('reconciled');
    expect(w.applied()).toBe(1);
    await first;
  });

  it('an attempt that stalls past its lease before the effect learns it lost on renew and does not apply', async () => {
    const [a, b] = open();
    opened.push(a, b);
    // While A stalls its renewals (heartbeats) do not reach the store, as when its worker is
    // partitioned: they fail. The renew right before the effect does reach it.
    let partitioned = true;
    const w = world({ inAlreadyApplied: LEASE * 3, after: () => (partitioned = false) });
    const zombie = handle(a, {
      renew: async (token, ms) => {
        if (partitioned) throw new Error('network partition: the store is unreachable');
        return a.renew(token, ms);
      },
    });
    const first = applyEffect(w.call('a'), { store: zombie, attempt: 1, owner: 'A', leaseMs: LEASE, logger });
    const failed = first.catch((e: unknown) => e);
    await sleep(LEASE * 1.5);
    const second = await applyEffect(w.call('b'), { store: handle(b), attempt: 2, owner: 'B', leaseMs: 10_000 });
    expect(second.report.outcome).toBe('executed');
    const error = await failed;
    expect(EffectClaimLostError.isInstance(error)).toBe(true);
    expect(w.applied()).toBe(1);
    expect((await b.get('run-z:comment:1'))?.attempt).toBe(2);
  });

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
