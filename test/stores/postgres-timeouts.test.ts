import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { z } from 'zod';
import { defineEffectTool, type IEffectStore } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { EffectStoreError, InvalidEffectStoreSpecError } from '../../src/errors/errors.js';
import { DEFAULT_PG_QUERY_TIMEOUT_MS, DEFAULT_PG_STATEMENT_TIMEOUT_MS } from '../../src/stores/postgres-connection.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';
import { stallingProxy as stallingProxyTo, type StallingProxy } from '../fixtures/stalling-proxy.js';

// A PostgreSQL connection that stops answering, for real: a TCP proxy in front of the server that
// drops every byte while keeping the sockets open (test/fixtures/stalling-proxy.ts). And a
// statement stuck on the server: a row lock held by another transaction.

const PG_URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `chamvi_timeouts_${process.pid}`;
const admin = new pg.Pool({ connectionString: PG_URL, max: 2 });
let tables = 0;
// Undone after each test even when it failed: a regression must fail the test, not hang the run
// on a stalled socket or a held lock.
// First what may block (a stalled proxy, a held lock), then the stores, whose close waits for their queries.
let unblock: Array<() => Promise<unknown> | void> = [];
let stores: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const undo of unblock) await undo();
  await Promise.all(stores.map((store) => store.close()));
  [unblock, stores] = [[], []];
});

async function stallingProxy(): Promise<StallingProxy> {
  const proxy = await stallingProxyTo(PG_URL);
  unblock.push(() => proxy.close());
  return proxy;
}

function countedCall(store: IEffectStore & { close(): Promise<void> }) {
  stores.push(store);
  const applied: string[] = [];
  const tool = defineEffectTool({
    inputSchema: z.object({ id: z.string() }),
    execute: async ({ id }) => {
      applied.push(id);
      return id;
    },
  });
  const ctx = createToolContext({ runId: `run-${++tables}`, agent: 'tester' });
  const call = (id: string) =>
    applyEffect(
      { tool, toolName: 'effect', input: { id }, ctx, options: { toolCallId: id, messages: [], context: ctx } },
      { store, logger: { warn: () => undefined } },
    );
  return { applied, call };
}

async function failureOf(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: Date.now() - started };
}

describe('PostgreSQL store timeouts', () => {
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('a connection that stops answering fails the effect call with EffectStoreError within queryTimeoutMs, applies nothing, and is dropped', async () => {
    const proxy = await stallingProxy();
    const store = new PostgresEffectStore({
      connectionString: proxy.url,
      schema,
      table: `q${++tables}`,
      pool: { max: 1 },
      queryTimeoutMs: 400,
    });
    const { applied, call } = countedCall(store);
    expect((await call('before')).result).toBe('before'); // schema created, the one connection is open
    proxy.stall();
    const { error, ms } = await failureOf(call('during'));
    expect(EffectStoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/did not answer a statement within 400 ms \(queryTimeoutMs/);
    expect((error as Error).message).toContain('127.0.0.1:');
    expect(ms).toBeLessThan(3_000);
    expect(applied).toEqual(['before']);
    // The stalled connection lost bytes: reusing it would hang or misread. A new one works.
    proxy.resume();
    expect((await call('after')).result).toBe('after');
    expect(applied).toEqual(['before', 'after']);
  });

  it(`by default a connection that stops answering fails the call within DEFAULT_PG_QUERY_TIMEOUT_MS (${DEFAULT_PG_QUERY_TIMEOUT_MS} ms)`, async () => {
    const proxy = await stallingProxy();
    const store = new PostgresEffectStore({ connectionString: proxy.url, schema, table: `q${++tables}` });
    const { applied, call } = countedCall(store);
    await call('before');
    proxy.stall();
    const { error, ms } = await failureOf(call('during'));
    expect(EffectStoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(new RegExp(`within ${DEFAULT_PG_QUERY_TIMEOUT_MS} ms`));
    expect(ms).toBeGreaterThanOrEqual(DEFAULT_PG_QUERY_TIMEOUT_MS - 200);
    expect(ms).toBeLessThan(DEFAULT_PG_QUERY_TIMEOUT_MS + 3_000);
    expect(applied).toEqual(['before']);
  }, 30_000);

  it.each([
    ['statementTimeoutMs 300', { statementTimeoutMs: 300 }, 300],
    [`the default (${DEFAULT_PG_STATEMENT_TIMEOUT_MS} ms)`, {}, DEFAULT_PG_STATEMENT_TIMEOUT_MS],
  ])(
    'a statement stuck behind a row lock is cancelled by the server after %s: EffectStoreError, nothing applied',
    async (_, timeouts, expected) => {
      const table = `s${++tables}`;
      const store = new PostgresEffectStore({ connectionString: PG_URL, schema, table, ...timeouts });
      const { applied, call } = countedCall(store);
      await store.put('warm-up', { toolName: 't', result: 1, origin: 'executed' });
      const locker = await admin.connect();
      let holding = true;
      // Destroying the connection of a failed test ends its transaction, and the lock with it.
      unblock.push(() => locker.release(holding));
      await locker.query('BEGIN');
      // Lock the table against writes, so the claim's upsert must wait for this transaction.
      await locker.query(`LOCK TABLE ${schema}.${table} IN EXCLUSIVE MODE`);
      const { error, ms } = await failureOf(call('locked'));
      expect(EffectStoreError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /cancelled a statement \(canceling statement due to statement timeout\)/,
      );
      expect(ms).toBeGreaterThanOrEqual(expected - 100);
      expect(ms).toBeLessThan(expected + 3_000);
      expect(applied).toEqual([]);
      await locker.query('ROLLBACK');
      holding = false;
      expect((await call('locked')).result).toBe('locked');
    },
    20_000,
  );

  it.each([
    ['statementTimeoutMs', { statementTimeoutMs: NaN }],
    ['statementTimeoutMs', { statementTimeoutMs: 0 }],
    ['queryTimeoutMs', { queryTimeoutMs: Infinity }],
    ['queryTimeoutMs', { queryTimeoutMs: -5 }],
    ['statementTimeoutMs', { pool: { statement_timeout: 1.5 } }],
  ])('a bad %s is refused when the store is created', (name, timeouts) => {
    const open = () => new PostgresEffectStore({ connectionString: PG_URL, ...timeouts });
    expect(open).toThrow(InvalidEffectStoreSpecError);
    expect(open).toThrow(new RegExp(`option ${name} is .*; use a whole number of milliseconds from 1 to 2147483647`));
  });
});
