// Payloads Temporal's External Storage offloads to the store, read back through the chamvi driver
// after someone else wrote the row (an edit, a truncation, garbage): SQLite and PostgreSQL, rows
// changed with SQL. The driver hands Temporal only what it stored.
import { afterAll, describe, expect, it } from '@jest/globals';
import { ApplicationFailure, type Payload } from '@temporalio/common';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { OffloadedPayloadCorruptError } from '../../src/errors/errors.js';
import type { ConversationStore } from '../../src/stores/conversation-store.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { storeStorageDriver } from '../../worker/store-storage-driver.js';

/** A store, what the driver's errors call it, and SQL on its payload table (`$table` in `sql`). */
interface Backend {
  readonly store: ManagedEffectStore & ConversationStore;
  readonly named: string;
  /** Runs one statement; `$table` is the payload table, parameters are `$1`, `$2`... */
  exec(sql: string, params: unknown[]): Promise<void>;
  close(): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), 'chamvi-payload-'));
const URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `chamvi_payload_${process.pid}`;
const admin = new pg.Pool({ connectionString: URL, max: 2 });
let tables = 0;

function sqliteBackend(): Backend {
  const path = join(dir, `payloads-${++tables}.db`);
  const store = new SqliteEffectStore({ path, table: 'fx' });
  let db: DatabaseSync | undefined;
  return {
    store,
    named: `SQLite file ${resolve(path)}`,
    exec: async (sql, params) => {
      db ??= new DatabaseSync(path);
      db.prepare(sql.replaceAll('$table', '"fx_payloads"').replace(/\$(\d+)/g, '?$1')).run(
        ...(params as Array<string | Uint8Array | number>),
      );
    },
    close: async () => {
      db?.close();
      await store.close();
    },
  };
}

function postgresBackend(): Backend {
  const table = `fx${++tables}`;
  const store = new PostgresEffectStore({ connectionString: URL, pool: { max: 2 }, schema, table });
  return {
    store,
    named: '(PostgresEffectStore)',
    exec: async (sql, params) => {
      await admin.query(sql.replaceAll('$table', `${schema}."${table}_payloads"`), params);
    },
    close: () => store.close(),
  };
}

/** SQL that cuts a row's data to its first `$2` bytes (`substr` on an SQLite BLOB counts bytes). */
const TRUNCATE = {
  SQLite: 'UPDATE $table SET data = substr(data, 1, $2) WHERE key = $1',
  PostgreSQL: 'UPDATE $table SET data = substring(data from 1 for $2::int) WHERE key = $1',
} as const;

const payload = (text: string): Payload => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify({ prompt: text })),
});

/** Stores `payloads` through a driver on `store`; the keys of their rows. */
async function stored(store: ConversationStore, ...payloads: Payload[]): Promise<string[]> {
  const claims = await storeStorageDriver(store).store({}, payloads);
  return claims.map((claim) => claim.claimData['key'] ?? '');
}

async function retrieve(store: ConversationStore, key: string): Promise<Payload> {
  const [back] = await storeStorageDriver(store).retrieve({}, [{ claimData: { key } }]);
  return back!;
}

/** The read's failure, checked to be the non-retryable OffloadedPayloadCorruptError naming `key` and the store. */
async function expectCorrupt(backend: Backend, key: string): Promise<OffloadedPayloadCorruptError> {
  const failure = await retrieve(backend.store, key).then(
    (value) => ({ notRejected: value }),
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure).toMatchObject({ type: 'OffloadedPayloadCorruptError', nonRetryable: true });
  const cause = (failure as ApplicationFailure).cause;
  expect(OffloadedPayloadCorruptError.isInstance(cause)).toBe(true);
  const error = cause as OffloadedPayloadCorruptError;
  expect(error).toMatchObject({ key, store: backend.named, retryable: false });
  expect((failure as Error).message).toContain(`payload ${key} `);
  expect((failure as Error).message).toContain(backend.named);
  return error;
}

const backends = [
  ['SQLite', sqliteBackend],
  ['PostgreSQL', postgresBackend],
] as const;

describe.each(backends)('offloaded payloads read back through the driver (%s)', (name, open) => {
  it('a payload row edited with SQL fails the read with OffloadedPayloadCorruptError, and an untouched one reads back', async () => {
    const backend = open();
    const [edited, untouched] = await stored(backend.store, payload('deploy to staging'), payload('keep'));
    // Same length, still a well-formed payload: only the hash can tell.
    const forged = Buffer.from((await backend.store.getPayload(edited!))!);
    forged.write('prod-eu', forged.indexOf('staging'));
    await backend.exec('UPDATE $table SET data = $2 WHERE key = $1', [edited, forged]);
    const error = await expectCorrupt(backend, edited!);
    expect(error.problem).toMatch(/^does not match its content hash \(its \d+ bytes hash to [\w-]{43}\)$/);
    const back = await retrieve(backend.store, untouched!);
    expect(JSON.parse(Buffer.from(back.data!).toString())).toEqual({ prompt: 'keep' });
    await backend.close();
  });

  it.each([2, 10])(
    'a payload row truncated to %i bytes with SQL fails with OffloadedPayloadCorruptError, not a RangeError or SyntaxError',
    async (bytes) => {
      const backend = open();
      const [key] = await stored(backend.store, payload('x'.repeat(40_000)));
      await backend.exec(TRUNCATE[name], [key, bytes]);
      expect((await backend.store.getPayload(key!))?.byteLength).toBe(bytes);
      await expectCorrupt(backend, key!);
      await backend.close();
    },
  );

  it.each([
    ['two bytes', Buffer.from([0, 1])],
    ['a header longer than the row', Buffer.concat([Buffer.from([0, 0, 1, 0]), Buffer.from('{"v":"chv1"}')])],
    ['a header that is not JSON', Buffer.concat([Buffer.from([0, 0, 0, 5]), Buffer.from('{bad}data')])],
    ['another format', Buffer.concat([Buffer.from([0, 0, 0, 12]), Buffer.from('{"v":"chv9"}data')])],
  ])(
    'a row of %s filed under its own hash fails with OffloadedPayloadCorruptError: not a payload the driver wrote',
    async (_what, garbage) => {
      const backend = open();
      const key = createHash('sha256').update(garbage).digest('base64url');
      await backend.store.putPayload(key, garbage);
      const error = await expectCorrupt(backend, key);
      expect(error.problem).toMatch(/^is not a payload the chamvi driver wrote \(.+\)$/);
      expect(error.cause).toBeInstanceOf(Error);
      await backend.close();
    },
  );
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});
