// The jest environment of `npm run mutants` (stryker.config.mjs), wrapped by Stryker's own.
//
// Two things make a run of one mutant cost what its killing test costs, not what the whole suite costs:
// - in the first (dry) run, which has no active mutant, it writes which test file holds which test
//   and how long each took (see ./tests-by-file.mjs), so the sequencer loads only the files of a
//   mutant's covering tests, quickest first;
// - in a mutant's run, once one test failed (the mutant is killed), it skips the tests still to
//   come: jest has no programmatic bail, and a killed mutant needs no second failing test.
// Plain `npm test` never uses it.
import process from 'node:process';
import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';
import { recordTestsOfFile } from './tests-by-file.mjs';

const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';
// The mutant whose run already has a failing test. Module state: jest loads this file once per
// process and runs every test file of a run in that process (Stryker runs jest in band).
let killed;

/** The test's name as jest's testNamePattern sees it: describe names and test name, space-separated. */
function fullName(test) {
  const names = [];
  for (let block = test; block !== undefined && block.parent !== undefined; block = block.parent) {
    names.unshift(block.name);
  }
  return names.join(' ');
}

export default class StopAtFirstFailureEnvironment extends NodeEnvironment {
  constructor(config, context) {
    super(config, context);
    this.rootDir = config.projectConfig.rootDir;
    this.testPath = context.testPath;
    this.tests = [];
  }

  async handleTestEvent(event) {
    const mutant = process.env[ACTIVE_MUTANT];
    if (mutant === undefined) {
      if (event.name === 'test_done') this.tests.push({ name: fullName(event.test), ms: event.test.duration ?? 0 });
      return;
    }
    if (event.name === 'test_fn_failure' || event.name === 'hook_failure') killed = mutant;
    else if (event.name === 'test_start' && killed === mutant) event.test.mode = 'skip';
  }

  async teardown() {
    if (process.env[ACTIVE_MUTANT] === undefined && this.tests.length > 0) {
      recordTestsOfFile(this.rootDir, this.testPath, this.tests);
    }
    await super.teardown();
  }
}
