import { describe } from '@jest/globals';
import { defineMatrix } from './matrix.js';

describe('crash matrix: every fault point x every strategy, one worker (dev server, SQLite store)', () => {
  defineMatrix('one worker');
});
