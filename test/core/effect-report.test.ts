// The default effect logger (src/effects/effect-report.ts): what it prints, and where.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { consoleEffectLogger } from '../../src/effects/effect-report.js';

describe('consoleEffectLogger', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('warns on the console with a [chamvi] prefix, passing the meta along (or an empty string)', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    consoleEffectLogger.warn('record failed', { key: 'k' });
    consoleEffectLogger.warn('no meta');
    expect(warn.mock.calls).toStrictEqual([
      ['[chamvi] record failed', { key: 'k' }],
      ['[chamvi] no meta', ''],
    ]);
  });
});
