import { describe, expect, it } from '@jest/globals';
import { REGRESSION_SEEDS } from './regression-seeds.js';
import { detectProtocol, simulate, type ProtocolFeatures } from './simulate.js';

// The simulator's seeds as tests: every history that once broke an invariant replays exactly and
// must now be clean, and a few hundred fresh seeds (a different range each run; a failure names
// its seed and the command that replays it) must be clean too.

const RANDOM_SEEDS = 300;
let features: ProtocolFeatures | undefined;
const protocol = async (): Promise<ProtocolFeatures> => (features ??= await detectProtocol());

/** The violations of `seed`, each as `seed S: invariant: message`, with the replay command. */
async function violationsOf(seed: number): Promise<string[]> {
  const result = await simulate(seed, await protocol());
  return result.violations.map(
    (v) => `seed ${seed}: ${v.invariant}: ${v.message} (replay: npm run sim -- --seed ${seed} --verbose)`,
  );
}

describe('deterministic simulation of the effect protocol', () => {
  it.each(REGRESSION_SEEDS.map((r) => [r.seed, r.bug] as const))(
    'seed %i, which found %s, replays with no violation',
    async (seed) => {
      expect(await violationsOf(seed)).toEqual([]);
    },
  );

  it(`${RANDOM_SEEDS} fresh seeds break no invariant`, async () => {
    const from = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
    const found: string[] = [];
    for (let seed = from; seed < from + RANDOM_SEEDS; seed++) found.push(...(await violationsOf(seed)));
    expect(found).toEqual([]);
  });

  it('a seed replays exactly: the same history, event for event, whatever ran before it', async () => {
    const features = await protocol();
    const alone = await simulate(13, features);
    for (let seed = 1; seed <= 20; seed++) await simulate(seed, features);
    const again = await simulate(13, features);
    expect(again.trace).toBe(alone.trace);
    expect(again.trace.split('\n').length).toBeGreaterThan(10);
  });
});
