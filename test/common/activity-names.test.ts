// The activities a worker registers are exactly the contract's names: nothing registered that no
// workflow schedules (chamvi.lookupEffect was), nothing scheduled that no worker registers.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createChamviActivities } from '../../activities/index.js';
import { ACTIVITY_NAMES } from '../../common/activity-names.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';

describe('activity names', () => {
  it('a worker registers exactly the activities of ACTIVITY_NAMES', () => {
    const registered = Object.keys(createChamviActivities({ agents: [], store: new MemoryEffectStore() }));
    expect(registered.sort()).toEqual(Object.values(ACTIVITY_NAMES).sort());
    expect(registered).not.toContain('chamvi.lookupEffect');
  });

  it('workflow code schedules every registered activity by its name', () => {
    const dir = fileURLToPath(new URL('../../workflows/', import.meta.url));
    const source = readdirSync(dir)
      .map((file) => readFileSync(`${dir}${file}`, 'utf8'))
      .join('\n');
    for (const key of Object.keys(ACTIVITY_NAMES))
      expect({ key, used: source.includes(`ACTIVITY_NAMES.${key}`) }).toEqual({ key, used: true });
  });
});
