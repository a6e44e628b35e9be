import { describe, expect, it } from '@jest/globals';
import { REGRESSION_SEEDS } from './regression-seeds.js';
import { prepareSuite, SUITES, type PreparedSuite, type SuiteName } from './suites.js';
import { OPEN_FINDINGS, openFindingOf } from './view-regression-seeds.js';

// The simulator's seeds as tests: every history that once broke an invariant replays exactly and
// must now be clean; the seeds of open findings still break theirs (a fixed one fails here: move
// it to the regression seeds); fresh seeds of every suite (a different range each run; a failure
// names its seed and the command that replays it) break nothing but open findings.

/** Fresh seeds per suite (the conversation and stream histories cost more than the effect protocol's). */
const RANDOM_SEEDS: Record<SuiteName, number> = { effects: 300, conversation: 150, stream: 150, budget: 500 };
const prepared = new Map<SuiteName, Promise<PreparedSuite>>();
const suite = (name: SuiteName): Promise<PreparedSuite> => {
  let found = prepared.get(name);
  if (found === undefined) prepared.set(name, (found = prepareSuite(name)));
  return found;
};

/** The violations of `seed` (those of open findings left out unless `all`), each with the replay command. */
async function violationsOf(name: SuiteName, seed: number, all = true): Promise<string[]> {
  const result = await (await suite(name)).run(seed);
  const flag = name === 'effects' ? '' : `--suite ${name} `;
  return result.violations
    .filter((v) => all || openFindingOf(name, v) === undefined)
    .map((v) => `seed ${seed}: ${v.invariant}: ${v.message} (replay: npm run sim -- ${flag}--seed ${seed} --verbose)`);
}

describe('deterministic simulation', () => {
  it.each(REGRESSION_SEEDS.map((r) => [r.suite ?? 'effects', r.seed, r.bug] as const))(
    '%s seed %i, which found %s, replays with no violation',
    async (name, seed) => {
      expect(await violationsOf(name, seed)).toEqual([]);
    },
  );

  // jest refuses an empty table; with no open finding there is nothing to replay.
  if (OPEN_FINDINGS.length > 0)
    it.each(OPEN_FINDINGS.map((f) => [f.suite, f.seed, f.bug, f.invariant] as const))(
      '%s seed %i still finds an open bug: %s (%s)',
      async (name, seed, _bug, invariant) => {
        const result = await (await suite(name)).run(seed);
        expect(result.violations.map((v) => v.invariant)).toContain(invariant);
      },
    );

  it.each(SUITES.map((name) => [RANDOM_SEEDS[name], name] as const))(
    '%i fresh seeds of the %s suite break no invariant',
    async (count, name) => {
      const from = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
      const found: string[] = [];
      for (let seed = from; seed < from + count; seed++) found.push(...(await violationsOf(name, seed, false)));
      expect(found).toEqual([]);
    },
    120_000,
  );

  it.each(SUITES.map((name) => [name] as const))(
    'the %s suite: a seed replays exactly, the same history event for event, whatever ran before it',
    async (name) => {
      const prepared = await suite(name);
      const alone = (await prepared.run(13)).trace();
      for (let seed = 1; seed <= 20; seed++) await prepared.run(seed);
      const again = (await prepared.run(13)).trace();
      expect(again).toBe(alone);
      expect(again.split('\n').length).toBeGreaterThan(10);
    },
  );
});
