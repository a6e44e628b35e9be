import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { z } from 'zod';
import { defineEffectTool } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { EffectKeyNotStorableError, EffectStoreError, EffectStoreSchemaError } from '../../src/errors/errors.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';
import { storageKey } from '../../src/stores/storage-key.js';
import { effectStoreConformance } from './conformance.js';

const URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `chamvi_conf_${process.pid}`;
const admin = new pg.Pool({ connectionString: URL, max: 2 });
let tables = 0;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const options = new WeakMap<ManagedEffectStore, { table: string; retentionMs?: number }>();
const open = (o: { table: string; retentionMs?: number }) =>
  new PostgresEffectStore({ connectionString: URL, pool: { max: 10 }, schema, ...o });

effectStoreConformance({
  name: 'PostgreSQL',
  create: async (opts) => {
    const o = { table: `t${++tables}`, ...opts };
    const store = open(o);
    options.set(store, o);
    return store;
  },
  sibling: async (store) => open(options.get(store)!),
  advance: sleep,
});

describe('PostgresEffectStore', () => {
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('creates its schema and table on first use, and a second store on the same table checks and reuses it', async () => {
    const a = new PostgresEffectStore({ connectionString: URL, schema, table: 'shared' });
    const b = new PostgresEffectStore({ pool: admin, schema, table: 'shared' });
    await Promise.all([a.put('k', { toolName: 't', result: 1, origin: 'executed' }), b.get('other')]);
    expect((await b.get('k'))?.result).toBe(1);
    await a.close();
    await b.close();
    expect((await admin.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]); // a handed-in pool stays open
  });

  it('migrates a table of 0.2.0 in place: the in-band unserialisable marks move out of band, released claims get a time prune can age', async () => {
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await admin.query(`
      CREATE TABLE ${schema}.v020 (
        id text COLLATE "C" PRIMARY KEY, key text NOT NULL, owner text, previous_owner text,
        fence bigint NOT NULL, lease_until timestamptz, tool_name text NOT NULL, run_id text,
        attempt integer, fingerprint text, origin text, result text,
        result_undefined boolean NOT NULL DEFAULT false, recorded_at timestamptz, expires_at timestamptz)`);
    await admin.query(`
      INSERT INTO ${schema}.v020 (id, key, fence, tool_name, origin, result, recorded_at, expires_at) VALUES
        ('marked', 'marked', 1, 't', 'executed', '{"$chamviUnserializableResult":"BigInt at $.n"}', now(), now() + interval '1 day'),
        ('plain', 'plain', 1, 't', 'executed', '{"id":1,"nul":"\\u0000"}', now(), now() + interval '1 day')`);
    await admin.query(`INSERT INTO ${schema}.v020 (id, key, fence, tool_name) VALUES ('released', 'released', 1, 't')`);
    const store = new PostgresEffectStore({ pool: admin, schema, table: 'v020', retentionMs: 300 });
    expect(await store.get('marked')).toMatchObject({ unserializable: 'BigInt at $.n', resultUndefined: true });
    expect(await store.get('marked')).not.toHaveProperty('result');
    expect(await store.get('plain')).toMatchObject({ result: { id: 1, nul: '\u0000' } });
    expect(await store.get('plain')).not.toHaveProperty('unserializable');
    await sleep(500);
    expect(await store.prune()).toBe(1);
    expect(await store.claim('released', { owner: 'B', leaseMs: 1000, toolName: 't' })).toMatchObject({
      token: { fence: 1 },
    });
    const { rows } = await admin.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'v020'`,
      [schema],
    );
    expect(rows.map((r: { indexname: string }) => r.indexname)).toContain('v020_claims');
  });

  it('refuses an incompatible table with EffectStoreSchemaError naming the columns', async () => {
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.foreign_table (id text PRIMARY KEY, key text, fence text)`);
    const store = new PostgresEffectStore({ pool: admin, schema, table: 'foreign_table' });
    const failure = store.get('k');
    await expect(failure).rejects.toThrow(EffectStoreSchemaError);
    await expect(failure).rejects.toThrow(/owner is missing;.*fence is text, expected bigint/);
  });

  it('a 52-character table name gets its full index name; a 53- or 63-character one is refused before use', async () => {
    const longest = 't'.repeat(52);
    const store = new PostgresEffectStore({ pool: admin, schema, table: longest });
    await store.put('k', { toolName: 't', result: 1, origin: 'executed' });
    const { rows } = await admin.query<{ indexname: string }>(
      'SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname',
      [schema, longest],
    );
    expect(rows.map((r) => r.indexname)).toContain(`${longest}_expires_at`);
    for (const table of ['t'.repeat(53), 't'.repeat(63)]) {
      const open = () => new PostgresEffectStore({ pool: admin, schema, table });
      expect(open).toThrow(EffectStoreSchemaError);
      expect(open).toThrow(/use 1 to 52 letters, digits or underscores.*PostgreSQL truncates names beyond 63/);
    }
  });

  it('a NUL in an effect key fails the call with EffectKeyNotStorableError, not as unreachable, and applies nothing', async () => {
    const store = new PostgresEffectStore({ pool: admin, schema, table: 'nul_keys' });
    let applied = 0;
    const tool = defineEffectTool({
      inputSchema: z.object({}),
      effectKey: () => 'run-1:comment:\u0000',
      execute: async () => ++applied,
    });
    const ctx = createToolContext({ runId: 'run-1', agent: 'tester' });
    const call = applyEffect(
      { tool, toolName: 'comment', input: {}, ctx, options: { toolCallId: 't', messages: [], context: ctx } },
      { store, logger: { warn: () => undefined } },
    );
    await expect(call).rejects.toThrow(EffectKeyNotStorableError);
    await expect(call).rejects.toThrow(/contains a NUL character/);
    await expect(call).rejects.not.toThrow(/reachable/);
    expect(applied).toBe(0);
  });

  it('stores a hashed primary key for a long key and the full key beside it', async () => {
    const store = new PostgresEffectStore({ pool: admin, schema, table: 'hashed' });
    const key = 'run-9:comment:' + 'é'.repeat(300);
    await store.put(key, { toolName: 't', result: null, origin: 'reconciled' });
    const { rows } = await admin.query<{ id: string; key: string }>(`SELECT id, key FROM ${schema}.hashed`);
    expect(rows).toEqual([{ id: expect.stringMatching(/^#sha256:[0-9a-f]{64}$/), key }]);
  });

  it('an unreachable server fails fast with an EffectStoreError naming host and port', async () => {
    const store = new PostgresEffectStore('postgres://postgres@127.0.0.1:1/test');
    const started = Date.now();
    const failure = store.claim('k', { owner: 'A', leaseMs: 1000, toolName: 't' });
    await expect(failure).rejects.toThrow(EffectStoreError);
    await expect(failure).rejects.toThrow(/127\.0\.0\.1:1\b/);
    expect(Date.now() - started).toBeLessThan(3_500);
    await store.close();
  });

  it('a blackholed server fails within the connect timeout', async () => {
    // 10.255.255.1 is unroutable here: the connect attempt hangs until connectionTimeoutMillis.
    const store = new PostgresEffectStore({
      connectionString: 'postgres://postgres@10.255.255.1:5432/test',
      pool: { connectionTimeoutMillis: 300 },
    });
    const started = Date.now();
    await expect(store.get('k')).rejects.toThrow(/10\.255\.255\.1:5432/);
    expect(Date.now() - started).toBeLessThan(2_000);
    await store.close();
  });

  it('a row filed under the same stored key by another key is refused on every path, never mixed in', async () => {
    // Keys over 512 bytes are filed under their SHA-256; the row's full key is compared on every
    // read and write. A real collision cannot be produced, so the row's key is rewritten by hand.
    const store = new PostgresEffectStore({ pool: admin, schema, table: 'collision' });
    const forge = (key: string) =>
      admin.query(`UPDATE ${schema}.collision SET key = 'another key' WHERE id = $1`, [storageKey(key)]);
    const done = 'd'.repeat(600);
    await store.put(done, { toolName: 't', result: 1, origin: 'executed' });
    await forge(done);
    const refused = /shares its stored \(hashed\) key with another key; refusing to mix their records/;
    await expect(store.get(done)).rejects.toThrow(refused);
    // The message quotes the first 80 characters of the key, not all 600.
    await expect(store.get(done)).rejects.toThrow(/^Effect key "d{80}…" shares/);
    await expect(store.claim(done, { owner: 'A', leaseMs: 60_000, toolName: 't' })).rejects.toThrow(refused);
    await expect(store.put(done, { toolName: 't', result: 2, origin: 'executed' })).rejects.toThrow(refused);
    const open = 'o'.repeat(600);
    expect((await store.claim(open, { owner: 'A', leaseMs: 60_000, toolName: 't' })).status).toBe('acquired');
    await forge(open);
    await expect(store.claim(open, { owner: 'B', leaseMs: 60_000, toolName: 't' })).rejects.toThrow(refused);
    await expect(store.put(open, { toolName: 't', result: 2, origin: 'executed' })).rejects.toThrow(refused);
    await store.close();
  });

  it('an open claim row names who holds the key: tool, run id, attempt and input fingerprint, for an operator to read', async () => {
    const store = new PostgresEffectStore({ pool: admin, schema, table: 'holders' });
    const claimed = await store.claim('k', {
      owner: 'A',
      leaseMs: 60_000,
      toolName: 'comment',
      runId: 'run-7',
      attempt: 3,
      fingerprint: 'f'.repeat(64),
    });
    expect(claimed.status).toBe('acquired');
    const { rows } = await admin.query(
      `SELECT tool_name, run_id, attempt, fingerprint FROM ${schema}.holders WHERE key = 'k'`,
    );
    expect(rows).toEqual([{ tool_name: 'comment', run_id: 'run-7', attempt: 3, fingerprint: 'f'.repeat(64) }]);
    await store.close();
  });
});
