// What each entry point loads when it is imported, in a fresh process: the root is the core API
// and loads no database driver and no child_process; stores and strategies load what they need
// only when they are imported (and the drivers only when a store opens).
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const RECORDER = root('test/entry-points/fixtures/record-loads.ts');

/** The watched modules `entry` resolves when imported in a new process. */
function loadsOf(entry: string): Array<{ specifier: string; from: string }> {
  const output = execFileSync(process.execPath, ['--import', 'tsx', RECORDER, root(entry)], {
    cwd: root(''),
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
    timeout: 60_000,
  });
  const line = output.trim().split('\n').pop() ?? '[]';
  return JSON.parse(line) as Array<{ specifier: string; from: string }>;
}

describe('entry points load only what they need', () => {
  it('importing the root loads neither pg, nor node:sqlite, nor child_process', () => {
    expect(loadsOf('src/index.ts')).toEqual([]);
  }, 60_000);

  it('@chamvi/temporal/stores and its store classes load no driver until a store opens', () => {
    for (const entry of ['src/stores/index.ts', 'src/stores/sqlite.ts', 'src/stores/postgres.ts']) {
      expect({ entry, loads: loadsOf(entry) }).toEqual({ entry, loads: [] });
    }
  }, 120_000);

  it('@chamvi/temporal/strategies loads child_process, for the git strategy (which is why it is not the root)', () => {
    const specifiers = loadsOf('src/strategies/index.ts').map((l) => l.specifier);
    expect(specifiers).toEqual(expect.arrayContaining([expect.stringMatching(/child_process$/)]));
  }, 60_000);
});
