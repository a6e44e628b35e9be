// docs/reliability.md must show, for every matrix cell, what the matrix tests expect.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { FAULT_POINTS, type MatrixPoint } from './expectations.js';
import { DOC_PATH, expectedCell } from './report.js';
import { STRATEGIES } from './strategies.js';

describe('docs/reliability.md', () => {
  it('lists every fault point x strategy with the expectation the tests assert, observed as expected', () => {
    const doc = readFileSync(DOC_PATH, 'utf8');
    for (const point of ['no fault', ...FAULT_POINTS] as MatrixPoint[]) {
      for (const strategy of STRATEGIES) {
        const cells = doc
          .split('\n')
          .map((line) => line.split('|').map((c) => c.trim()))
          .find((c) => c[1] === `${point} · ${strategy}`);
        expect(cells).toBeDefined();
        const [, , want, one, two] = cells ?? [];
        expect(want).toBe(expectedCell(strategy, point));
        expect(one).toBe(`${expectedCell(strategy, point)} ✓`);
        expect(two).toBe(`${expectedCell(strategy, point)} ✓`);
      }
    }
  });
});
