// Closing a run stream store while readers wait on it (a server shutting down with open pages),
// on a real SQLite file and real PostgreSQL: the waiting readers are released at once (not at
// their next poll or safety read), and the closed store refuses reads instead of opening its
// database again behind the caller's back.
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresRunStreamStore } from '../../src/stream/postgres-run-stream.js';
import type { RunStreamStore } from '../../src/stream/run-stream-store.js';
import { SqliteRunStreamStore } from '../../src/stream/sqlite-run-stream.js';
import { dropTables } from './fixtures/drop-tables.js';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(join(tmpdir(), 'chamvi-stream-close-'));
const tables: string[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropTables(tables);
});

const stores: Array<[string, () => RunStreamStore]> = [
  // Polls a minute apart: only the close can release the reader in time.
  ['sqlite', () => new SqliteRunStreamStore(join(dir, `${randomUUID()}.db`), { pollMs: 60_000 })],
  [
    'postgres',
    () => {
      const table = `stream_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      tables.push(table);
      return new PostgresRunStreamStore(PG_URL, { table, safetyPollMs: 60_000 });
    },
  ],
];

describe.each(stores)('the %s run stream, closed while readers wait', (_name, make) => {
  it('releases every waiting reader at once and refuses reads afterwards', async () => {
    const store = make();
    const ref = { runId: 'r', step: 0, attempt: 1, execution: 'e' };
    await store.append(ref, [{ type: 'text-delta', id: 't', delta: 'a' }]);
    const waits = [1, 2, 3].map(() => store.waitForAppend('r', 1).then(() => Date.now()));
    // Let every reader reach its wait (its first check done).
    await new Promise((r) => setTimeout(r, 200));
    const closedAt = Date.now();
    await store.close();
    const released = await Promise.all(
      waits.map((w) => Promise.race([w, new Promise((r) => setTimeout(r, 2000).unref())])),
    );
    for (const at of released) {
      expect(typeof at).toBe('number');
      expect((at as number) - closedAt).toBeLessThan(1000);
    }
    await expect(store.read('r', 0)).rejects.toThrow(/closed/);
  }, 15_000);
});
