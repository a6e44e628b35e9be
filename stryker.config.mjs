// Mutation testing of the effect protocol and the stores (`npm run mutants`): Stryker
// mutates src/effects/ and src/stores/ and runs, for each mutant, the tests that covered it in the
// first run. A measurement like the benchmarks, not part of CI: a full run takes tens of minutes.
// Results: docs/reliability.md, "Mutation testing". Narrow a run to one file while working on it:
//   npm run mutants -- --mutate src/stores/memory-effect-store.ts
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';

// The tests that exercise src/effects/ and src/stores/ in this process. Left out: the Temporal and
// dev-server suites (minutes per run), and pg-optional-peer (it checks packaging with tsc and child
// processes, no protocol or store behaviour a mutant could change).
// MUTANTS_TESTS (comma-separated globs) narrows them, for a faster run whose score is a lower bound of
// the full set's: a mutant a subset kills, the full set kills too.
const TESTS = process.env.MUTANTS_TESTS?.split(',') ?? [
  'test/core/**/*.test.ts',
  'test/stores/**/*.test.ts',
  'test/simulation/regression.test.ts',
];
const NOT_TESTS = ['test/stores/pg-optional-peer.test.ts'];

// The runner aids of test/mutation/ (a mutant's run loads only the files of its covering tests and
// stops at its first failing test). MUTANTS_PLAIN=1 runs without them, to compare.
const AIDS =
  process.env.MUTANTS_PLAIN === '1'
    ? {}
    : {
        // Relative to the sandbox, which is the working directory of Stryker's runner and jest's rootDir.
        testEnvironment: './test/mutation/stop-at-first-failure-environment.mjs',
        testSequencer: './test/mutation/covering-files-sequencer.mjs',
      };

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: ['src/effects/**/*.ts', 'src/stores/**/*.ts'],
  testRunner: 'jest',
  // The project is ESM under jest: node needs vm modules, as in the `test` script.
  testRunnerNodeArgs: ['--experimental-vm-modules'],
  jest: {
    projectType: 'custom',
    configFile: 'jest.config.js',
    config: {
      testMatch: TESTS.map((glob) => `<rootDir>/${glob}`),
      testPathIgnorePatterns: ['/node_modules/', ...NOT_TESTS.map((file) => `<rootDir>/${file}`)],
      ...AIDS,
    },
    // perTest coverage already narrows each mutant to the tests that reached it.
    enableFindRelatedTests: false,
  },
  coverageAnalysis: 'perTest',
  // Two cores, shared with other test runs: one runner at a time (override with --concurrency).
  concurrency: 1,
  // Store tests wait on real leases and real PostgreSQL; a mutant that makes one hang counts as killed
  // (timeout) after this long beyond its normal time.
  timeoutMS: 20_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 20,
  // Each test runner process is replaced after this many mutants, so pools and timers a mutant leaks
  // do not pile up over a run of thousands.
  maxTestRunnerReuse: 100,
  // The sandbox (a copy of the tree) lives outside the repository, so jest and tsc runs in the tree
  // never see a second copy of the package.
  tempDirName: join(tmpdir(), 'chamvi-stryker'),
  // The docs stay: a test reads the settings table of docs/reference.
  ignorePatterns: ['/.tools', '/dist', '/.chamvi', '/coverage', '/examples/consumer', '/bench', '/docs/.vitepress'],
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  clearTextReporter: { reportTests: false, logTests: false, allowColor: false },
  htmlReporter: { fileName: 'coverage/mutation/mutation.html' },
  jsonReporter: { fileName: 'coverage/mutation/mutation.json' },
  incrementalFile: 'coverage/mutation/stryker-incremental.json',
  thresholds: { high: 90, low: 80, break: null },
};
