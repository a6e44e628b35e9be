// The jest test sequencer of `npm run mutants` (stryker.config.mjs). Stryker runs one mutant's
// covering tests by a testNamePattern, and jest would still load every test file (their imports,
// their describe bodies) to find them: seconds per mutant, thousands of mutants. This sequencer
// keeps only the files that hold a test the pattern selects, as the dry run recorded them
// (./tests-by-file.mjs), and runs the file whose selected tests took least time first, so that the
// environment's stop at the first failure comes early. A file the dry run did not record is kept
// (last), so nothing that could kill a mutant is ever left out. Without a pattern (the dry run, a
// static mutant) every file runs.
import Sequencer from '@jest/test-sequencer';
import { testsByFile } from './tests-by-file.mjs';

export default class CoveringFilesSequencer extends Sequencer {
  constructor(options) {
    super(options);
    this.globalConfig = options.globalConfig;
  }

  sort(tests) {
    const pattern = this.globalConfig.testNamePattern;
    const known = tests[0] === undefined ? undefined : testsByFile(tests[0].context.config.rootDir);
    if (!pattern || known === undefined) return super.sort(tests);
    // The same regular expression jest builds from the pattern.
    const selects = new RegExp(pattern, 'i');
    const cost = new Map();
    for (const test of tests) {
      const recorded = known[test.path];
      if (recorded === undefined) cost.set(test, Number.MAX_SAFE_INTEGER);
      else {
        const selected = recorded.filter(({ name }) => selects.test(name));
        if (selected.length > 0)
          cost.set(
            test,
            selected.reduce((sum, { ms }) => sum + ms, 0),
          );
      }
    }
    return [...cost.keys()].sort((a, b) => cost.get(a) - cost.get(b));
  }
}
