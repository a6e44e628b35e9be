// What each entry point loads when it is imported, in a fresh process: the root is the core API
// and loads no database driver and no child_process; stores and strategies load what they need
// only when they are imported (and the drivers only when a store opens); the client loads no
// worker, so that a web server can bundle it.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const RECORDER = root('test/entry-points/fixtures/record-loads.ts');

/** The watched modules (default: pg, node:sqlite, child_process) `entry` resolves when imported in a new process. */
function loadsOf(entry: string, watched?: RegExp): Array<{ specifier: string; from: string }> {
  const args = ['--import', 'tsx', RECORDER, root(entry), ...(watched !== undefined ? [watched.source] : [])];
  const output = execFileSync(process.execPath, args, {
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

  it('@chamvi/temporal/stores, with every store class, loads no driver until a store opens', () => {
    expect(loadsOf('src/stores/index.ts')).toEqual([]);
  }, 60_000);

  it('@chamvi/temporal/strategies loads child_process, for the git strategy (which is why it is not the root)', () => {
    const specifiers = loadsOf('src/strategies/index.ts').map((l) => l.specifier);
    expect(specifiers).toEqual(expect.arrayContaining([expect.stringMatching(/child_process$/)]));
  }, 60_000);
});

describe('the testing kit loads the optional peer @temporalio/testing only to create an environment', () => {
  it('importing @chamvi/temporal/testing loads no @temporalio/testing (the demo image uses its scripted model without it)', () => {
    expect(loadsOf('testing/index.ts', /^@temporalio\/testing(\/|$)/)).toEqual([]);
  }, 60_000);
});

/** The worker side of the SDK, the workflow code and its bundler's entry (what `next build` cannot bundle). */
const WORKER_SIDE =
  /^@temporalio\/(worker|activity|testing|workflow)(\/|$)|\/node_modules\/@temporalio\/(worker|activity|testing|workflow|core-bridge)\/|\/worker\/workflows-path\.|\/(workflows|activities)\/[^/]+\.[jt]s$/;

describe('the client entry point loads no worker', () => {
  it('importing @chamvi/temporal/client loads no @temporalio/worker, activity, workflow or testing module, and no workflow or activity code', () => {
    expect(loadsOf('client/index.ts', WORKER_SIDE)).toEqual([]);
  }, 60_000);

  it('importing @chamvi/temporal/worker does load them (the check above sees what it looks for)', () => {
    const specifiers = loadsOf('worker/index.ts', WORKER_SIDE).map((l) => l.specifier);
    expect(specifiers).toEqual(expect.arrayContaining(['@temporalio/worker', '@temporalio/activity']));
  }, 60_000);

  it('the worker and the activities do not load @opentelemetry/api (an optional peer) until an activity makes a span', () => {
    for (const entry of ['worker/index.ts', 'activities/index.ts']) {
      expect({ entry, loads: loadsOf(entry, /@opentelemetry\/api/) }).toEqual({ entry, loads: [] });
    }
  }, 120_000);
});
