// Which test file holds which test, and how long each took, as the first (dry) run of
// `npm run mutants` saw them: written by ./stop-at-first-failure-environment.mjs, read by
// ./covering-files-sequencer.mjs. The file lives in the jest root of the run, which for Stryker is
// its sandbox (a copy of the tree), never the tree itself.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE = '.mutants-tests-by-file.json';

/**
 * The map `test file path → [{ name, ms }]` (full test names, dry-run durations) of `rootDir`, or
 * `undefined` before a dry run wrote it.
 */
export function testsByFile(rootDir) {
  const path = join(rootDir, FILE);
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined;
}

/** Adds (or replaces) the tests of one test file. */
export function recordTestsOfFile(rootDir, testPath, tests) {
  const map = testsByFile(rootDir) ?? {};
  map[testPath] = tests;
  writeFileSync(join(rootDir, FILE), JSON.stringify(map));
}
