import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it, jest } from '@jest/globals';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'chamvi-group-commit-'));
let tables = 0;
const fresh = () => new SqliteEffectStore({ path: join(dir, 'group.db'), table: `g${++tables}` });
const claimOf = (owner: string) => ({ owner, leaseMs: 60_000, toolName: 't' });

/** Counts the COMMITs every SQLite connection of this process runs from now on. */
function countCommits(): { readonly count: () => number } {
  const spy = jest.spyOn(DatabaseSync.prototype, 'exec');
  return { count: () => spy.mock.calls.filter(([sql]) => /^\s*COMMIT\b/i.test(sql)).length };
}

describe('SQLite group commit', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('commits the writes issued in one turn together: 20 concurrent claims cost one COMMIT', async () => {
    const store = fresh();
    await store.get('open the file first');
    const commits = countCommits();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim(`k${i}`, claimOf(`o${i}`))));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill('acquired'));
    expect(commits.count()).toBe(1);
    await store.close();
  });

  it('does not hold a lone write back: it commits within the turn after it was issued', async () => {
    const store = fresh();
    await store.get('open');
    const started = performance.now();
    await store.put('alone', { toolName: 't', result: 1, origin: 'executed' });
    expect(performance.now() - started).toBeLessThan(250);
    await store.close();
  });

  it('rolls back only the write that failed: the other writes of its batch are kept', async () => {
    const store = fresh();
    const run = 'run-planted';
    await store.appendConversation(run, [{ key: 'e1', parent: '', json: '"first"' }]);
    const commits = countCommits();
    const [claimA, planted, claimB] = await Promise.allSettled([
      store.claim('a', claimOf('x')),
      // A new entry, then an entry whose key the file holds with other content: refused as a whole.
      store.appendConversation(run, [
        { key: 'e2', parent: 'e1', json: '"second"' },
        { key: 'e1', parent: '', json: '"changed"' },
      ]),
      store.claim('b', claimOf('y')),
    ]);
    expect(commits.count()).toBe(1);
    expect(planted.status).toBe('rejected');
    expect(claimA.status === 'fulfilled' && claimA.value.status).toBe('acquired');
    expect(claimB.status === 'fulfilled' && claimB.value.status).toBe('acquired');
    const reopened = new SqliteEffectStore({ path: join(dir, 'group.db'), table: `g${tables}` });
    expect(await reopened.loadConversation('e2')).toBeUndefined();
    expect((await reopened.claim('a', claimOf('z'))).status).toBe('busy');
    expect((await reopened.claim('b', claimOf('z'))).status).toBe('busy');
    await Promise.all([store.close(), reopened.close()]);
  });

  it('never loses a write whose promise resolved, when the process is SIGKILLed mid-batch', async () => {
    const path = join(dir, 'crash.db');
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'group-commit-child.ts'), path], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        // Several hundred resolved writes: the kill lands while later batches are being written.
        if (out.split('\n').length > 400 && child.exitCode === null) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    if (child.exitCode === null && child.signalCode === null)
      await new Promise((resolve) => child.once('exit', resolve));
    expect(child.signalCode).toBe('SIGKILL');
    const acknowledged = out.split('\n').filter((line) => line.startsWith('crash:'));
    expect(acknowledged.length).toBeGreaterThanOrEqual(400);
    const store = new SqliteEffectStore({ path, table: 'crash' });
    const missing: string[] = [];
    for (const key of acknowledged) if ((await store.get(key)) === undefined) missing.push(key);
    expect(missing).toEqual([]);
    await store.close();
  }, 60_000);
});
