import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { InvalidEffectStoreSpecError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { createEffectStore, inspectEffects } from '../../src/stores/index.js';
import { parseStoreSpec } from '../../src/stores/store-spec.js';
import { storageKey } from '../../src/stores/storage-key.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';

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
    ['sqlite:%zz', /malformed percent-encoding in its path/],
    ['sqlite:///var/lib/100%.db', /malformed percent-encoding in its path/],
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

describe('PostgreSQL specs never echo the password', () => {
  const PASSWORD = 'S3cret';
  it.each([
    ['a port that is not a number', 'postgres://u:pw-S3cret@127.0.0.1:notaport/test', /the port is not a number/],
    ['a port beyond 65535', 'postgres://u:pw-S3cret@127.0.0.1:99999/test', /the port 99999 is not from 1 to 65535/],
    ['port 0', 'postgres://u:pw-S3cret@127.0.0.1:0/test', /has port 0; use a port from 1 to 65535/],
    ['a user but no host', 'postgres://u:pw-S3cret@/test', /it has a user but no host/],
    ['a port but no host', 'postgres://u:pw-S3cret@:5432/test', /it has a user but no host/],
    ['a stray "@" in the password and no host', 'postgres://u:pw@S3cret@/test', /it has a user but no host/],
    [
      'a bad percent-encoding in the password',
      'postgres://u:pw-S3cret%zz@h/test',
      /malformed percent-encoding in its password/,
    ],
    [
      'a bad percent-encoding in the database',
      'postgres://u:pw-S3cret@h/te%zzst',
      /percent-encoding in its database name/,
    ],
    [
      'an unknown parameter',
      'postgres://u:pw-S3cret@h/test?sslmod=require',
      /parameter "sslmod", which pg does not read/,
    ],
    ['a parameter pg ignores', 'postgres://u:pw-S3cret@h/?dbname=test', /parameter "dbname": pg ignores it/],
    ['an unknown sslmode', 'postgres://u:pw-S3cret@h/test?sslmode=allow', /sslmode "allow"; use one of/],
    ['a password query parameter next to a typo', 'postgres://h/test?password=pw-S3cret&bogus=1', /"bogus"/],
    ['an unencoded "/" in the password', 'postgres://u:pw/S3cret@h/test', /password holds a "\/", "\?" or "#"/],
    ['an unencoded "?" in the password', 'postgres://u:pw?S3cret@h/test', /password holds a "\/", "\?" or "#"/],
    ['an unencoded "#" in the password', 'postgres://u:pw#S3cret@h/test', /password holds a "\/", "\?" or "#"/],
    ['no "//" after the scheme', 'postgres:u:pw-S3cret@h/test', /is not a PostgreSQL URL; write it as postgres:\/\//],
    ['no ":" after the scheme', 'postgres//u:pw-S3cret@h/test', /looks like a postgres URL without its ":"/],
    ['a forgotten "@host" (the password becomes a port)', 'postgres://u:pw-S3cret/test', /the port is not a number/],
    ['an unclosed IPv6 host', 'postgres://u:pw-S3cret@[::1/test', /the IPv6 host has no closing "\]"/],
    ['a space in the host', 'postgresql://u:pw-S3cret@bad host/test', /the host "bad host" holds characters/],
  ])('%s: a precise, non-retryable InvalidEffectStoreSpecError without the password', (_, spec, problem) => {
    const errors: unknown[] = [];
    for (const open of [
      () => parseStoreSpec(spec),
      () => createEffectStore(spec),
      () => new PostgresEffectStore(spec),
    ]) {
      try {
        open();
      } catch (error) {
        errors.push(error);
      }
    }
    expect(errors).toHaveLength(3);
    for (const error of errors) {
      expect(InvalidEffectStoreSpecError.isInstance(error)).toBe(true);
      expect((error as InvalidEffectStoreSpecError).retryable).toBe(false);
      expect((error as Error).message).toMatch(problem);
      expect((error as Error).message).not.toContain(PASSWORD);
    }
  });

  it('a bad URL passed as a pool connectionString is refused the same way', () => {
    const open = () => new PostgresEffectStore({ pool: { connectionString: 'postgres://u:pw-S3cret@h:x/db' } });
    expect(open).toThrow(InvalidEffectStoreSpecError);
    expect(open).toThrow(/the port is not a number/);
    expect(open).not.toThrow(new RegExp(PASSWORD));
  });

  it.each([
    'postgres:///test',
    'postgres://u:p%40ss%2Fw@h:5432/db?sslmode=require&application_name=chamvi',
    'postgresql://[::1]:5432/db',
    'postgres://u@h/db?host=/var/run/postgresql&options=-c%20search_path%3Dx',
  ])('a well-formed URL %j is accepted as is', (spec) => {
    expect(parseStoreSpec(spec)).toEqual({ kind: 'postgres', url: spec });
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
