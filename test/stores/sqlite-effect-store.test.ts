import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { defineEffectTool } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { createToolContext } from '../../src/context/tool-context.js';
import { EffectStoreOpenError, EffectStoreSchemaError } from '../../src/errors/errors.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { storageKey } from '../../src/stores/storage-key.js';
import { effectStoreConformance } from './conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'chamvi-sqlite-store-'));
let tables = 0;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const options = new WeakMap<ManagedEffectStore, { path: string; table: string; retentionMs?: number }>();

effectStoreConformance({
  name: 'SQLite',
  create: async (opts) => {
    const o = { path: join(dir, 'conformance.db'), table: `t${++tables}`, ...opts };
    const store = new SqliteEffectStore(o);
    options.set(store, o);
    return store;
  },
  sibling: async (store) => new SqliteEffectStore(options.get(store)!),
  advance: sleep,
});

describe('SqliteEffectStore', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('opens the file in WAL mode with synchronous=FULL, from a path or an sqlite: URL', async () => {
    const path = join(dir, 'pragmas.db');
    const store = new SqliteEffectStore(`sqlite://${path}`);
    expect(store.path).toBe(path);
    await store.put('k', { toolName: 't', result: 1, origin: 'executed' });
    await store.close();
    const db = new DatabaseSync(path);
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(db.prepare('SELECT count(*) AS n FROM chamvi_effects').get()).toEqual({ n: 1 });
    db.close();
    const reopened = new SqliteEffectStore(path);
    expect((await reopened.get('k'))?.result).toBe(1);
    await reopened.close();
  });

  it('migrates a table of 0.2.0 in place: the in-band unserialisable marks move out of band, released claims get a time prune can age', async () => {
    const path = join(dir, 'v020.db');
    const db = new DatabaseSync(path);
    db.exec(`
      CREATE TABLE chamvi_effects (
        id TEXT NOT NULL PRIMARY KEY, key TEXT NOT NULL, owner TEXT, previous_owner TEXT,
        fence INTEGER NOT NULL, lease_until INTEGER, tool_name TEXT NOT NULL, run_id TEXT,
        attempt INTEGER, fingerprint TEXT, origin TEXT, result TEXT,
        result_undefined INTEGER NOT NULL DEFAULT 0, recorded_at TEXT, expires_at INTEGER
      ) WITHOUT ROWID;
      INSERT INTO chamvi_effects (id, key, fence, tool_name, origin, result, recorded_at, expires_at) VALUES
        ('marked', 'marked', 1, 't', 'executed', '{"$chamviUnserializableResult":"BigInt at $.n"}', '2026-01-01T00:00:00.000Z', 99999999999999),
        ('plain', 'plain', 1, 't', 'executed', '{"id":1}', '2026-01-01T00:00:00.000Z', 99999999999999);
      INSERT INTO chamvi_effects (id, key, owner, fence, lease_until, tool_name) VALUES ('released', 'released', NULL, 1, NULL, 't');
    `);
    db.close();
    const store = new SqliteEffectStore({ path, retentionMs: 300 });
    expect(await store.get('marked')).toMatchObject({ unserializable: 'BigInt at $.n', resultUndefined: true });
    expect(await store.get('marked')).not.toHaveProperty('result');
    expect(await store.get('plain')).toMatchObject({ result: { id: 1 } });
    expect(await store.get('plain')).not.toHaveProperty('unserializable');
    await sleep(500);
    expect(await store.prune()).toBe(1);
    expect(await store.claim('released', { owner: 'B', leaseMs: 1000, toolName: 't' })).toMatchObject({
      token: { fence: 1 },
    });
    await store.close();
    const check = new DatabaseSync(path);
    expect(
      check.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'chamvi_effects_claims'`).all(),
    ).toHaveLength(1);
    check.close();
  });

  it('refuses an incompatible table with EffectStoreSchemaError naming the columns', async () => {
    const path = join(dir, 'foreign.db');
    const db = new DatabaseSync(path);
    db.exec('CREATE TABLE chamvi_effects (id TEXT PRIMARY KEY, key TEXT, fence TEXT)');
    db.close();
    const store = new SqliteEffectStore(path);
    const failure = store.get('k');
    await expect(failure).rejects.toThrow(EffectStoreSchemaError);
    await expect(store.get('k')).rejects.toThrow(/owner is missing;.*fence is TEXT, expected INTEGER/);
    await store.close();
  });

  it('creates the missing parent folders of the store path when it first opens the file', async () => {
    const path = join(dir, 'fresh-checkout', '.chamvi', 'effects.db');
    const store = new SqliteEffectStore(path);
    expect(existsSync(dirname(path))).toBe(false);
    await store.put('k', { toolName: 't', result: 1, origin: 'executed' });
    expect(existsSync(path)).toBe(true);
    expect((await store.get('k'))?.result).toBe(1);
    await store.close();
  });

  it('a path that cannot be opened fails every call with a non-retryable EffectStoreOpenError naming it, applying nothing', async () => {
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a folder');
    const path = join(blocker, 'effects.db');
    const store = new SqliteEffectStore(path);
    let applied = 0;
    const tool = defineEffectTool({ inputSchema: z.object({}), execute: async () => ++applied });
    const ctx = createToolContext({ runId: 'run-1', agent: 'tester' });
    const call = () =>
      applyEffect(
        { tool, toolName: 'comment', input: {}, ctx, options: { toolCallId: 't', messages: [], context: ctx } },
        { store, logger: { warn: () => undefined } },
      );
    for (const outcome of [await call().catch((e: unknown) => e), await store.get('k').catch((e: unknown) => e)]) {
      expect(EffectStoreOpenError.isInstance(outcome)).toBe(true);
      expect((outcome as EffectStoreOpenError).retryable).toBe(false);
      expect((outcome as Error).message).toContain(`The SQLite effect store at ${path} cannot be used`);
      expect((outcome as Error).message).toContain(`its folder ${blocker} cannot be created`);
    }
    expect(applied).toBe(0);
    await store.close();
  });

  it('a file that is not a database fails with EffectStoreOpenError naming the path', async () => {
    const path = join(dir, 'not-a-db.db');
    writeFileSync(path, 'x'.repeat(4096));
    const store = new SqliteEffectStore(path);
    await expect(store.get('k')).rejects.toThrow(EffectStoreOpenError);
    await expect(store.get('k')).rejects.toThrow(`The SQLite effect store at ${path} cannot be used`);
    await store.close();
  });

  it('rejects an unusable table name before touching the file', () => {
    expect(() => new SqliteEffectStore({ path: join(dir, 'x.db'), table: 'effects; DROP TABLE x' })).toThrow(
      EffectStoreSchemaError,
    );
  });

  it('waits out another connection holding the write lock instead of leaking SQLITE_BUSY', async () => {
    const path = join(dir, 'locked.db');
    const store = new SqliteEffectStore({ path, busyTimeoutMs: 5_000 });
    await store.get('warm-up');
    const other = new DatabaseSync(path);
    other.exec('BEGIN IMMEDIATE');
    setTimeout(() => other.exec('COMMIT'), 150);
    const started = Date.now();
    const claimed = await store.claim('k', { owner: 'A', leaseMs: 1000, toolName: 't' });
    expect(claimed.status).toBe('acquired');
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    other.close();
    await store.close();
  });

  it('surfaces a lock held past busyTimeoutMs as a thrown error', async () => {
    const path = join(dir, 'stuck.db');
    const store = new SqliteEffectStore({ path, busyTimeoutMs: 100 });
    await store.get('warm-up');
    const other = new DatabaseSync(path);
    other.exec('BEGIN IMMEDIATE');
    await expect(store.claim('k', { owner: 'A', leaseMs: 1000, toolName: 't' })).rejects.toThrow(/locked|busy/i);
    other.exec('COMMIT');
    other.close();
    await store.close();
  });

  it('a row filed under the same stored key by another key is refused on every path, never mixed in', async () => {
    // Keys over 512 bytes are filed under their SHA-256; the row's full key is compared on every
    // read and write. A real collision cannot be produced, so the row's key is rewritten by hand.
    const path = join(dir, 'collision.db');
    const store = new SqliteEffectStore({ path, table: 'effects' });
    const db = new DatabaseSync(path);
    const forge = (key: string) =>
      db
        .prepare('UPDATE "effects" SET key = :other WHERE id = :id')
        .run({ other: 'z'.repeat(600), id: storageKey(key) });
    const done = 'd'.repeat(600);
    await store.put(done, { toolName: 't', result: 1, origin: 'executed' });
    forge(done);
    const refused = /hashes to the same stored key as "z{80}…"; refusing to mix their records/;
    await expect(store.get(done)).rejects.toThrow(refused);
    // The message quotes the first 80 characters of the key, not all 600.
    await expect(store.get(done)).rejects.toThrow(/^Effect key "d{80}…" hashes/);
    await expect(store.claim(done, { owner: 'A', leaseMs: 60_000, toolName: 't' })).rejects.toThrow(refused);
    await expect(store.put(done, { toolName: 't', result: 2, origin: 'executed' })).rejects.toThrow(refused);
    const open = 'o'.repeat(600);
    expect((await store.claim(open, { owner: 'A', leaseMs: 60_000, toolName: 't' })).status).toBe('acquired');
    forge(open);
    await expect(store.claim(open, { owner: 'B', leaseMs: 60_000, toolName: 't' })).rejects.toThrow(refused);
    await expect(store.put(open, { toolName: 't', result: 2, origin: 'executed' })).rejects.toThrow(
      /hashes to the same stored key as "\(an unfinished claim\)…"/,
    );
    db.close();
    await store.close();
  });

  it('a finished row without an expiry (an earlier version wrote "never") reads back with no expiresAt and stays', async () => {
    const path = join(dir, 'no-expiry.db');
    const store = new SqliteEffectStore({ path, table: 'effects', retentionMs: 1 });
    await store.put('k', { toolName: 't', result: 1, origin: 'executed' });
    const db = new DatabaseSync(path);
    db.prepare('UPDATE "effects" SET expires_at = NULL WHERE key = :key').run({ key: 'k' });
    db.close();
    await sleep(20);
    const record = await store.get('k');
    expect(record).toMatchObject({ key: 'k', result: 1 });
    expect(record !== undefined && 'expiresAt' in record).toBe(false);
    await store.close();
  });
});
