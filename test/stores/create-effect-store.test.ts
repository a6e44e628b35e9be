import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  createEffectStore,
  inspectEffects,
  InvalidEffectStoreSpecError,
  MemoryEffectStore,
  parseStoreSpec,
  PostgresEffectStore,
  SqliteEffectStore,
  storageKey,
} from '../../src/index.js';

const PG_URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(join(tmpdir(), 'chamvi-factory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('createEffectStore', () => {
  it('reads memory:, file paths, sqlite: URLs and postgres URLs', () => {
    expect(parseStoreSpec('memory:')).toEqual({ kind: 'memory' });
    expect(parseStoreSpec('./effects.db')).toEqual({ kind: 'sqlite', path: './effects.db' });
    expect(parseStoreSpec('/var/lib/x.db')).toEqual({ kind: 'sqlite', path: '/var/lib/x.db' });
    expect(parseStoreSpec('C:\\data\\x.db')).toEqual({ kind: 'sqlite', path: 'C:\\data\\x.db' });
    expect(parseStoreSpec('sqlite:effects.db')).toEqual({ kind: 'sqlite', path: 'effects.db' });
    expect(parseStoreSpec('sqlite:///var/lib/my%20x.db')).toEqual({ kind: 'sqlite', path: '/var/lib/my x.db' });
    expect(parseStoreSpec('sqlite::memory:')).toEqual({ kind: 'sqlite', path: ':memory:' });
    expect(parseStoreSpec('postgres://u@h:5/db')).toEqual({ kind: 'postgres', url: 'postgres://u@h:5/db' });
    expect(parseStoreSpec('postgresql://u@h/db')).toEqual({ kind: 'postgres', url: 'postgresql://u@h/db' });
  });

  it('creates the store each spec names', async () => {
    const stores = [
      createEffectStore('memory:'),
      createEffectStore(join(dir, 'a.db')),
      createEffectStore(`sqlite:${join(dir, 'b.db')}`),
      createEffectStore(PG_URL, { schema: `chamvi_factory_${process.pid}` }),
    ];
    expect(stores.map((s) => s.constructor)).toEqual([
      MemoryEffectStore,
      SqliteEffectStore,
      SqliteEffectStore,
      PostgresEffectStore,
    ]);
    await Promise.all(stores.map((s) => s.close()));
  });

  it.each([
    ['', /non-empty string/],
    ['   ', /non-empty string/],
    ['redis://localhost:6379', /Unknown effect store scheme "redis:"/],
    ['mysql://user:secret@db/x', /Unknown effect store scheme "mysql:" in "mysql:\/\/user:\*\*\*@db\/x"/],
    ['memory:extra', /text after "memory:"/],
    ['sqlite:', /no file path/],
    ['sqlite://host/x.db', /names a host/],
    ['postgres:localhost', /not a PostgreSQL URL/],
    ['postgres//db-host:5432/effects', /looks like a postgres URL without its ":"/],
  ])('a malformed spec %j fails naming the problem and the accepted forms', (spec, problem) => {
    let caught: unknown;
    try {
      createEffectStore(spec);
    } catch (error) {
      caught = error;
    }
    expect(InvalidEffectStoreSpecError.isInstance(caught)).toBe(true);
    expect((caught as Error).message).toMatch(problem);
    expect((caught as Error).message).toMatch(/Accepted forms: "memory:", a file path .* a PostgreSQL URL/);
  });
});

describe('inspectEffects', () => {
  it("lists a run's records with key, tool, origin, attempt and times, and nothing of other runs", async () => {
    const store = new SqliteEffectStore(join(dir, 'inspect.db'));
    await store.put('run-7:comment:1', { toolName: 'comment', result: 1, origin: 'executed', attempt: 1 });
    await store.put('run-7:label:bug', { toolName: 'label', result: null, origin: 'reconciled', attempt: 3 });
    await store.put('run-70:comment:1', { toolName: 'comment', result: 2, origin: 'executed' });
    const rows = await inspectEffects(store, 'run-7:');
    expect(rows).toEqual([
      expect.objectContaining({ key: 'run-7:comment:1', tool: 'comment', origin: 'executed', attempt: 1 }),
      expect.objectContaining({ key: 'run-7:label:bug', tool: 'label', origin: 'reconciled', attempt: 3 }),
    ]);
    for (const row of rows) {
      expect(Date.parse(row.expiresAt!)).toBeGreaterThan(Date.parse(row.recordedAt));
    }
    expect(await inspectEffects(store, 'run-7')).toHaveLength(3);
    await store.close();
  });

  it('refuses a store that cannot list', async () => {
    await expect(inspectEffects({ get: async () => undefined }, 'run')).rejects.toThrow(/list\(prefix\)/);
  });
});

describe('storageKey', () => {
  it('keeps keys up to 512 UTF-8 bytes and hashes longer ones and ones that look hashed', () => {
    expect(storageKey('a'.repeat(512))).toBe('a'.repeat(512));
    expect(storageKey('é'.repeat(256))).toBe('é'.repeat(256));
    expect(storageKey('é'.repeat(257))).toMatch(/^#sha256:[0-9a-f]{64}$/);
    expect(storageKey('#sha256:abc')).toMatch(/^#sha256:[0-9a-f]{64}$/);
  });
});
