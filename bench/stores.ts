// Effect store benchmark: claim+complete, recorded-path get and a whole effect call (the protocol
// through applyEffect, a new key each time), per store, with 1 and 8 concurrent clients; for
// PostgreSQL also the same statements run bare through `pg`.
// Run: npm run bench:stores   (node --import tsx bench/stores.ts); BENCH_STORES=sqlite (say) for one store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { z } from 'zod';
import { defineEffectTool } from '../src/index.js';
import { applyEffect } from '../src/effects/effect-protocol.js';
import { createToolContext } from '../src/context/tool-context.js';
import {
  MemoryEffectStore,
  PostgresEffectStore,
  SqliteEffectStore,
  type ManagedEffectStore,
} from '../src/stores/index.js';
import { storageKey } from '../src/stores/storage-key.js';
import { pgStatements } from '../src/stores/postgres-statements.js';

const STORES = (process.env['BENCH_STORES'] ?? 'memory,sqlite,postgres').split(',');
const PG_URL = process.env['CHAMVI_BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `chamvi_bench_${process.pid}`;
const RETENTION = 3_600_000;
const OPS = {
  claim: Number(process.env['BENCH_CLAIM_OPS'] ?? 2000),
  get: Number(process.env['BENCH_GET_OPS'] ?? 5000),
};

type Op = (i: number) => Promise<void>;

interface Result {
  readonly opsPerSec: number;
  /** This process's CPU time (user + sys) per operation, in µs. */
  readonly cpuUs: number;
  readonly p50: number;
  readonly p99: number;
}

/** Runs `ops` operations with `clients` concurrent loops; latency per operation in ms. */
async function measure(ops: number, clients: number, op: (i: number) => Promise<void>): Promise<Result> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < ops; i = next++) {
        const t = performance.now();
        await op(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { opsPerSec: ops / elapsed, cpuUs: (used.user + used.system) / ops, p50: at(0.5), p99: at(0.99) };
}

let run = 0;
const record = (result: unknown) => ({ toolName: 'bench', result, origin: 'executed' as const, runId: 'bench' });
const request = (owner: string) => ({ owner, leaseMs: 60_000, toolName: 'bench', runId: 'bench', attempt: 1 });

function claimComplete(store: ManagedEffectStore, prefix: string) {
  return async (i: number) => {
    const claimed = await store.claim(`${prefix}:${i}`, request(`o${i}`));
    if (claimed.status !== 'acquired') throw new Error(`claim ${i}: ${claimed.status}`);
    await store.complete(claimed.token, record({ i }));
  };
}

const benchTool = defineEffectTool({
  inputSchema: z.object({ i: z.number() }),
  execute: async ({ i }: { i: number }) => ({ i }),
});

/** One effect call per operation through the whole protocol: claim, execute, complete. */
function effectCall(store: ManagedEffectStore, runId: string): Op {
  const ctx = createToolContext({ runId, agent: 'bench' });
  return async (i) => {
    const call = {
      tool: benchTool,
      toolName: 'bench',
      input: { i },
      ctx,
      options: { toolCallId: 'c', messages: [], context: ctx },
    };
    const { report } = await applyEffect(call, { store });
    if (report.outcome !== 'executed') throw new Error(`effect call ${i}: ${report.outcome}`);
  };
}

/** Effect-call rows of a store, 1 and 8 clients. */
async function effectCallRows(name: string, store: ManagedEffectStore): Promise<string[]> {
  const rows: string[] = [];
  for (const clients of [1, 8, 100])
    rows.push(
      row(name, 'effect call (new key)', clients, await measure(OPS.claim, clients, effectCall(store, `ec-${++run}`))),
    );
  return rows;
}

async function storeRows(name: string, store: ManagedEffectStore): Promise<string[]> {
  const rows: string[] = [];
  await measure(200, 8, claimComplete(store, `warm-${++run}`));
  // 100: as many as the activities of 100 concurrent runs, where group commit shows.
  for (const clients of [1, 8, 100]) {
    const r = await measure(OPS.claim, clients, claimComplete(store, `cc-${++run}`));
    rows.push(row(name, 'claim+complete', clients, r));
  }
  const recorded = `rec-${++run}`;
  await measure(1000, 8, async (i) => void (await store.put(`${recorded}:${i}`, record({ i }))));
  for (const clients of [1, 8]) {
    const r = await measure(OPS.get, clients, async (i) => {
      if ((await store.get(`${recorded}:${i % 1000}`)) === undefined) throw new Error('missing record');
    });
    rows.push(row(name, 'get (recorded)', clients, r));
  }
  return [...rows, ...(await effectCallRows(name, store))];
}

/** The store's own statements and values, through a bare pool: the baseline for the ratio. */
function bare(pool: pg.Pool, table: string) {
  const sql = pgStatements(`"${SCHEMA}"."${table}"`);
  const q = (name: string, text: string, values: unknown[]) => pool.query({ name: `bare_${name}`, text, values });
  return {
    claimComplete: (prefix: string) => async (i: number) => {
      const key = `${prefix}:${i}`;
      const id = storageKey(key);
      const owner = `o${i}`;
      const claimed = await q('claim', sql.claim, [id, key, owner, 60_000, 'bench', 'bench', 1, null]);
      const fence = Number((claimed.rows[0] as { fence: string }).fence);
      const tail = ['bench', 'bench', null, null, 'executed', JSON.stringify({ i }), false, null, RETENTION, null];
      await q('complete', sql.complete, [id, key, owner, fence, ...tail]);
    },
    get: (prefix: string) => async (i: number) => {
      const res = await q('get', sql.get, [storageKey(`${prefix}:${i % 1000}`)]);
      if (res.rows.length === 0) throw new Error('missing record');
    },
  };
}

function row(store: string, op: string, clients: number, r: Result, ratio?: number): string {
  const cells = [store, op, clients, Math.round(r.opsPerSec), Math.round(r.cpuUs), r.p50.toFixed(2), r.p99.toFixed(2)];
  return `| ${cells.join(' | ')} | ${ratio === undefined ? '' : ratio.toFixed(2)} |`;
}

async function postgresRows(): Promise<string[]> {
  const store = new PostgresEffectStore({
    connectionString: PG_URL,
    schema: SCHEMA,
    table: 'effects',
    pool: { max: 8 },
  });
  const pool = new pg.Pool({ connectionString: PG_URL, max: 8 });
  const b = bare(pool, 'effects');
  const rows: string[] = [];
  await measure(200, 8, claimComplete(store, `warm-${++run}`));
  await measure(200, 8, b.claimComplete(`warm-${++run}`));
  // Interleaved rounds (store, bare, store, bare, ...), best of three each: the machine is shared and noisy.
  const compare = async (label: string, clients: number, ops: number, mine: () => Op, theirs: () => Op) => {
    const s: Result[] = [];
    const r: Result[] = [];
    for (let round = 0; round < 3; round++) {
      s.push(await measure(ops, clients, mine()));
      r.push(await measure(ops, clients, theirs()));
    }
    const top = (xs: Result[]) => xs.reduce((a, b) => (b.opsPerSec > a.opsPerSec ? b : a));
    rows.push(row('PostgreSQL', label, clients, top(s), top(s).opsPerSec / top(r).opsPerSec));
    rows.push(row('bare pg', label, clients, top(r)));
  };
  for (const clients of [1, 8, 100]) {
    await compare(
      'claim+complete',
      clients,
      OPS.claim,
      () => claimComplete(store, `cc-${++run}`),
      () => b.claimComplete(`bare-${++run}`),
    );
  }
  const recorded = `rec-${++run}`;
  await measure(1000, 8, async (i) => void (await store.put(`${recorded}:${i}`, record({ i }))));
  const storeGet = () => async (i: number) => {
    if ((await store.get(`${recorded}:${i % 1000}`)) === undefined) throw new Error('missing record');
  };
  await measure(1000, 8, storeGet());
  await measure(1000, 8, b.get(recorded));
  for (const clients of [1, 8]) await compare('get (recorded)', clients, OPS.get, storeGet, () => b.get(recorded));
  rows.push(...(await effectCallRows('PostgreSQL', store)));
  await store.close();
  await pool.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await pool.end();
  return rows;
}

const dir = mkdtempSync(join(tmpdir(), 'chamvi-bench-'));
try {
  const rows = [
    ...(STORES.includes('memory') ? await storeRows('memory', new MemoryEffectStore({ retentionMs: RETENTION })) : []),
    ...(STORES.includes('sqlite')
      ? await storeRows('SQLite', new SqliteEffectStore({ path: join(dir, 'bench.db'), retentionMs: RETENTION }))
      : []),
    ...(STORES.includes('postgres') ? await postgresRows() : []),
  ];
  console.log('| store | operation | clients | ops/s | CPU µs/op | p50 ms | p99 ms | ratio to bare pg |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) console.log(r);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
