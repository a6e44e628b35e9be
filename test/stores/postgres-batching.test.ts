import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';

const URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `chamvi_batch_${process.pid}`;
const admin = new pg.Pool({ connectionString: URL, max: 2 });
let tables = 0;
const claimOf = (owner: string) => ({ owner, leaseMs: 60_000, toolName: 't' });
const record = (i: number) => ({ toolName: 't', result: { i }, origin: 'executed' as const });

/** A store on a pool of its own whose statements this test counts. */
function countedStore(): { store: PostgresEffectStore; statements: string[] } {
  const pool = new pg.Pool({ connectionString: URL, max: 4 });
  const statements: string[] = [];
  const query = pool.query.bind(pool) as (config: { text: string }) => Promise<unknown>;
  (pool as unknown as { query: typeof query }).query = (config) => {
    statements.push(config.text.trim().split(/\s+/).slice(0, 2).join(' '));
    return query(config);
  };
  const store = new PostgresEffectStore({ pool, schema, table: `b${++tables}` });
  return { store, statements };
}

describe('PostgreSQL statement batching', () => {
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('sends the claims and the completions issued in one turn as one statement each', async () => {
    const { store, statements } = countedStore();
    await store.get('create the table first');
    statements.length = 0;
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim(`k${i}`, claimOf(`o${i}`))));
    expect(claims.map((c) => c.status)).toEqual(Array(20).fill('acquired'));
    expect(statements).toHaveLength(1);
    const done = await Promise.all(
      claims.map((c, i) =>
        c.status === 'acquired' ? store.complete(c.token, record(i)) : Promise.reject(new Error()),
      ),
    );
    expect(done.map((d) => d.status === 'ok' && d.record?.result)).toEqual(
      Array.from({ length: 20 }, (_, i) => ({ i })),
    );
    expect(statements).toHaveLength(2);
    await store.close();
  });

  it('decides each item of a batch on its own: a free key is taken, a held key is busy, a recorded key is done', async () => {
    const { store } = countedStore();
    const held = await store.claim('held', claimOf('first'));
    const finished = await store.claim('finished', claimOf('first'));
    if (finished.status !== 'acquired' || held.status !== 'acquired') throw new Error('setup');
    await store.complete(finished.token, record(1));
    const [free, busy, done] = await Promise.all([
      store.claim('free', claimOf('second')),
      store.claim('held', claimOf('second')),
      store.claim('finished', claimOf('second')),
    ]);
    expect(free.status).toBe('acquired');
    expect(busy.status).toBe('busy');
    expect(done.status === 'done' && done.record.result).toEqual({ i: 1 });
    await store.close();
  });

  it('completes only the claims that still hold: a stale fence in the batch loses, the others are recorded', async () => {
    const { store } = countedStore();
    const a = await store.claim('a', claimOf('x'));
    const b = await store.claim('b', claimOf('x'));
    if (a.status !== 'acquired' || b.status !== 'acquired') throw new Error('setup');
    const [good, stale] = await Promise.all([
      store.complete(a.token, record(1)),
      store.complete({ ...b.token, fence: b.token.fence + 1 }, record(2)),
    ]);
    expect(good.status).toBe('ok');
    expect(stale.status).toBe('lost');
    expect(await store.get('b')).toBeUndefined();
    await store.close();
  });

  it('falls back to one statement per item when the server refuses the batch: two owners claiming one key in one turn', async () => {
    const { store, statements } = countedStore();
    await store.get('create the table first');
    statements.length = 0;
    const [first, second, other] = await Promise.all([
      store.claim('same', claimOf('x')),
      store.claim('same', claimOf('y')),
      store.claim('other', claimOf('z')),
    ]);
    expect([first.status, second.status].sort()).toEqual(['acquired', 'busy']);
    expect(other.status).toBe('acquired');
    // The refused batch, then each claim alone (the busy one reads why).
    expect(statements.length).toBeGreaterThan(3);
    await store.close();
  });
});
