import { describe } from '@jest/globals';
import { defineMatrix } from './matrix.js';

describe('crash matrix: every fault point x every strategy, two workers (dev server) each with its own PostgresEffectStore on one table', () => {
  defineMatrix('two workers');
});
