import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';

const PG_URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const PROCESSES = 8;
const KEYS = 200;

interface Summary {
  readonly pid: number;
  readonly outcomes: Record<string, number>;
  readonly errors: string[];
}

/** Starts the workers, releases them at once, and collects their summaries. */
async function race(args: string[]): Promise<Summary[]> {
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  const done: Promise<Summary>[] = [];
  for (let i = 0; i < PROCESSES; i++) {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'race-child.ts'), ...args], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.push(child);
    let out = '';
    ready.push(
      new Promise((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('ready\n')) resolve();
        });
      }),
    );
    done.push(
      new Promise((resolve, reject) => {
        child.on('exit', (code) => {
          const last = out.trim().split('\n').pop() ?? '';
          if (code === 0) resolve(JSON.parse(last) as Summary);
          else reject(new Error(`worker exited with ${code}: ${out}`));
        });
      }),
    );
  }
  await Promise.all(ready);
  for (const child of children) child.stdin!.end('go\n');
  return Promise.all(done);
}

function expectEveryKeyOnce(executedKeys: string[], summaries: Summary[]): void {
  const counts = new Map<string, number>();
  for (const key of executedKeys) counts.set(key, (counts.get(key) ?? 0) + 1);
  expect(counts.size).toBe(KEYS);
  expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
  const leaked = summaries.flatMap((s) => s.errors).filter((e) => /SQLITE_BUSY|database is locked/i.test(e));
  expect(leaked).toEqual([]);
  const executed = summaries.reduce((sum, s) => sum + (s.outcomes['executed'] ?? 0), 0);
  const answered = summaries.reduce((sum, s) => sum + Object.values(s.outcomes).reduce((a, b) => a + b, 0), 0);
  expect(executed).toBe(KEYS);
  expect(answered).toBe(KEYS * PROCESSES);
}

describe(`${PROCESSES} worker processes x ${KEYS} keys racing through applyEffect`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'chamvi-race-'));
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  const schema = `chamvi_race_${process.pid}`;
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('on one SQLite file: every key is executed exactly once and no SQLITE_BUSY leaks', async () => {
    const counter = join(dir, 'executed.log');
    writeFileSync(counter, '');
    const summaries = await race([join(dir, 'race.db'), '-', 'chamvi_effects', String(KEYS), counter]);
    const lines = readFileSync(counter, 'utf8').trim().split('\n');
    expectEveryKeyOnce(
      lines.map((l) => l.split(' ')[0]!),
      summaries,
    );
  }, 60_000);

  it('on PostgreSQL: every key is executed exactly once', async () => {
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.executed (key text NOT NULL, pid integer NOT NULL)`);
    const summaries = await race([PG_URL, schema, 'effects', String(KEYS), `${schema}.executed`]);
    const { rows } = await admin.query<{ key: string }>(`SELECT key FROM ${schema}.executed`);
    expectEveryKeyOnce(
      rows.map((r) => r.key),
      summaries,
    );
  }, 60_000);
});
