// The soak's short form (test/reliability/soak.ts): 20 concurrent runs x 5 effect calls, two worker processes
// on one PostgreSQL table, a random worker SIGKILLed every ~3 s, 2% of store calls failing.
import { describe, expect, it } from '@jest/globals';
import { runSoak } from './soak.js';
import { writeObservations } from './matrix.js';

describe('soak (short form)', () => {
  it('no duplicate and no lost effect under random worker kills and store hiccups', async () => {
    const report = await runSoak({ runs: 20, killEveryMs: 3000, hiccups: 0.02, limitMs: 100_000 });
    writeObservations('soak-short', [report]);
    expect(report.completedRuns).toBe(20);
    expect(report.duplicates).toBe(0);
    expect(report.lost).toBe(0);
    expect(report.kills).toBeGreaterThan(0);
  }, 150_000);
});
