import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { chainEntries, conversationRoot } from '../../src/conversation/conversation-entry.js';
import { ConversationEntryCorruptError } from '../../src/errors/errors.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';

const URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `chamvi_batch_${process.pid}`;
const admin = new pg.Pool({ connectionString: URL, max: 2 });
let tables = 0;
// A store leaves a pool handed in to its owner: these are ended after the tests.
const pools: pg.Pool[] = [];
const claimOf = (owner: string) => ({ owner, leaseMs: 60_000, toolName: 't' });
const record = (i: number) => ({ toolName: 't', result: { i }, origin: 'executed' as const });
const user = (text: string) => ({ role: 'user', content: text });
const assistant = (text: string) => ({ role: 'assistant', content: [{ type: 'text', text }] });
/** A run's first two messages as entries. */
const conversationOf = (run: string, text: string) =>
  chainEntries(conversationRoot(run), [user(text), assistant(`done: ${text}`)]);

/** A store on a pool of its own whose statements this test counts. */
function countedStore(retentionMs?: number): { store: PostgresEffectStore; statements: string[] } {
  const pool = new pg.Pool({ connectionString: URL, max: 4 });
  pools.push(pool);
  const statements: string[] = [];
  const query = pool.query.bind(pool) as (config: { text: string }) => Promise<unknown>;
  (pool as unknown as { query: typeof query }).query = (config) => {
    statements.push(config.text.trim().split(/\s+/).slice(0, 2).join(' '));
    return query(config);
  };
  const store = new PostgresEffectStore({
    pool,
    schema,
    table: `b${++tables}`,
    ...(retentionMs !== undefined ? { retentionMs } : {}),
  });
  return { store, statements };
}

describe('PostgreSQL statement batching', () => {
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
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

  it('sends the conversation appends of concurrent runs issued in one turn as one statement, each run loadable', async () => {
    const { store, statements } = countedStore();
    await store.get('create the tables first');
    statements.length = 0;
    const runs = Array.from({ length: 20 }, (_, i) => ({ run: `run-${i}-${process.hrtime.bigint()}`, i }));
    const chains = runs.map(({ run, i }) => conversationOf(run, `task ${i}`));
    await Promise.all(runs.map(({ run }, i) => store.appendConversation(run, chains[i]!, { execution: `wf/${i}` })));
    expect(statements).toHaveLength(1);
    for (const chain of chains) expect(await store.loadConversation(chain[1]!.key)).toEqual(chain);
    await store.close();
  });

  it("a planted entry refuses its own run's append in a batch, writing nothing of it; the other runs are written", async () => {
    const { store, statements } = countedStore();
    const [victim, a, b] = ['victim', 'a', 'b'].map((r) => `${r}-${process.hrtime.bigint()}`) as [
      string,
      string,
      string,
    ];
    const genuine = conversationOf(victim, 'deploy to staging');
    await store.appendConversation(victim, [{ ...genuine[0]!, json: JSON.stringify(user('deploy to production')) }]);
    // The same entry stored under another run id (which prune goes by) is refused too.
    const squatted = `squatted-${process.hrtime.bigint()}`;
    const ofSquatted = conversationOf(squatted, 'hi');
    await store.appendConversation(`squatter-${process.hrtime.bigint()}`, ofSquatted);
    statements.length = 0;
    const [refused, alsoRefused, ...written] = await Promise.allSettled([
      store.appendConversation(victim, genuine),
      store.appendConversation(squatted, ofSquatted),
      store.appendConversation(a, conversationOf(a, 'a')),
      store.appendConversation(b, conversationOf(b, 'b')),
    ]);
    expect(statements).toHaveLength(1);
    expect(refused?.status).toBe('rejected');
    const error = (refused as PromiseRejectedResult).reason as unknown;
    expect(ConversationEntryCorruptError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ runId: victim, key: genuine[0]!.key });
    expect((alsoRefused as PromiseRejectedResult).reason).toMatchObject({ runId: squatted, key: ofSquatted[0]!.key });
    expect(written.map((w) => w.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(await store.loadConversation(genuine[1]!.key)).toBeUndefined();
    expect(await store.loadConversation(conversationOf(a, 'a')[1]!.key)).toHaveLength(2);
    await store.close();
  });

  it("a run's second append in the turn follows the batch, as it would alone: a zombie's late close after the retry's write leaves the execution open", async () => {
    const retentionMs = 300;
    const { store, statements } = countedStore(retentionMs);
    const run = `zombie-${process.hrtime.bigint()}`;
    const other = `other-${process.hrtime.bigint()}`;
    const [prompt] = chainEntries(conversationRoot(run), [user('deploy')]);
    const taken = chainEntries(prompt!.key, [assistant('calling deploy')]);
    const zombie = chainEntries(prompt!.key, [assistant('deployed, I think')]);
    await store.get('create the tables first');
    statements.length = 0;
    const execution = 'wf/r1';
    await Promise.all([
      store.appendConversation(run, [prompt!, ...taken], { execution, writtenBy: { activity: 1, attempt: 2 } }),
      store.appendConversation(other, conversationOf(other, 'x'), { close: true }),
      store.appendConversation(run, zombie, { execution, writtenBy: { activity: 1, attempt: 1 }, close: true }),
    ]);
    // The batch (the retry's write and the other run), then the zombie's on its own.
    expect(statements).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, retentionMs + 100));
    // The other run is closed and goes; the zombie's close did not close the retry's execution.
    expect(await store.prune(Infinity)).toBe(2);
    expect(await store.loadConversation(taken[0]!.key)).toEqual([prompt, ...taken]);
    await store.close();
  });

  it('an append in a batch that continues an execution as new lets go of the execution it continues', async () => {
    const retentionMs = 300;
    const { store, statements } = countedStore(retentionMs);
    const run = `continued-${process.hrtime.bigint()}`;
    const other = `other-${process.hrtime.bigint()}`;
    const [first, second] = conversationOf(run, 'long task');
    await store.appendConversation(run, [first!], { execution: 'wf/1' });
    statements.length = 0;
    await Promise.all([
      store.appendConversation(run, [second!], { execution: 'wf/2', previousExecution: 'wf/1', close: true }),
      store.appendConversation(other, conversationOf(other, 'y'), { close: true }),
    ]);
    expect(statements).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, retentionMs + 100));
    // wf/1 was let go of and wf/2 closed: both runs' entries go.
    expect(await store.prune(Infinity)).toBe(4);
    await store.close();
  });

  it("a run's second append in the turn that fails, fails alone: the batch before it has committed and stands", async () => {
    const { store, statements } = countedStore();
    const run = `twice-${process.hrtime.bigint()}`;
    const other = `other-${process.hrtime.bigint()}`;
    const [first, second] = conversationOf(run, 'twice');
    await store.get('create the tables first');
    statements.length = 0;
    // PostgreSQL refuses a NUL in text: the second append's statement fails on the server.
    const [batched, alongside, failed] = await Promise.allSettled([
      store.appendConversation(run, [first!]),
      store.appendConversation(other, conversationOf(other, 'z')),
      store.appendConversation(run, [{ ...second!, json: `"${String.fromCharCode(0)}"` }]),
    ]);
    expect([batched.status, alongside.status, failed.status]).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((failed as PromiseRejectedResult).reason).toMatchObject({ code: '22021' });
    // The batch, then the failed append: nothing is sent again.
    expect(statements).toHaveLength(2);
    expect(await store.loadConversation(first!.key)).toEqual([first]);
    await store.close();
  });
});
