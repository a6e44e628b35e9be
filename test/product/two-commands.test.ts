// The README's two commands on a machine whose Node is too old and cannot be replaced: scripts/dev.sh
// (what `npm start` and `npm test` run) stops with one line naming the fix, before anything would
// fail with `No such built-in module: node:sqlite`.
import { afterAll, describe, expect, it } from '@jest/globals';
import { chmodSync, cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, scratchDir } from './packed-package.js';
import { ROOT } from './run-cli.js';

const root = scratchDir('chamvi-old-node-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

// A clone's scripts/ with a Node 20 on PATH whose npm cannot reach a registry.
cpSync(join(ROOT, 'scripts'), join(root, 'scripts'), { recursive: true });
const bin = join(root, 'fake-bin');
mkdirSync(bin);
writeFileSync(
  join(bin, 'node'),
  '#!/bin/sh\ncase "$1" in -v|--version) echo v20.19.0 ;; -p) echo 20 ;; *) echo "node: $*" >&2; exit 9 ;; esac\n',
);
writeFileSync(join(bin, 'npm'), '#!/bin/sh\necho "npm error network request failed" >&2\nexit 1\n');
for (const tool of ['node', 'npm']) chmodSync(join(bin, tool), 0o755);

describe('the two commands on a Node older than 22 that cannot be replaced', () => {
  it.each(['start', 'test'])('dev.sh %s stops with one line naming the fix', async (command) => {
    const result = await run('bash', [join(root, 'scripts', 'dev.sh'), command], {
      cwd: root,
      env: { PATH: `${bin}:/usr/bin:/bin`, HOME: root },
      timeoutMs: 30_000,
    });
    expect(result.code).toBe(1);
    const errors = result.output.split('\n').filter((l) => l !== '' && !l.startsWith('setup: system Node is'));
    expect(errors).toEqual([
      'setup: this project needs Node 22.13+ (found v20.19.0) and installing Node 24 into .tools/node24 failed: ' +
        'install Node 22+ (https://nodejs.org) or let npm reach its registry, then run the command again',
    ]);
  });
});
