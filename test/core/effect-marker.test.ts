import { describe, expect, it } from '@jest/globals';
import { effectMarker, findEffectMarkers } from '../../src/index.js';

/** The text between `<!--` and `-->`. */
function commentBody(marker: string): string {
  expect(marker.startsWith('<!--')).toBe(true);
  expect(marker.endsWith('-->')).toBe(true);
  return marker.slice(4, -3);
}

const awkwardKeys = [
  'run-1:comment:7',
  'a--b',
  '--',
  '---',
  'x-',
  '-x',
  'a>b',
  'a-->b',
  'a--!>b',
  '<!--',
  '100%',
  '%2D',
  '%E0%A4%A',
  'with spaces and\ttabs\nand newlines',
  'ünïcødé:日本語:🚀',
  '\u00a0nbsp\u2028ls',
  'chamvi:effect=inner -->',
  '',
];

describe('effectMarker / findEffectMarkers', () => {
  it('writes <!-- chamvi:effect=<key> --> for a plain key', () => {
    expect(effectMarker('r:comment:1')).toBe('<!-- chamvi:effect=r:comment:1 -->');
  });

  it.each(awkwardKeys.map((k) => [JSON.stringify(k), k]))('round-trips the key %s exactly', (_name, key) => {
    const text = `Some comment\n\n${effectMarker(key)}\ntrailing text`;
    expect(findEffectMarkers(text)).toEqual([key]);
  });

  it.each(awkwardKeys.map((k) => [JSON.stringify(k), k]))(
    'keeps the marker of %s one HTML comment: no "--" in its body, no ">" or "<!--" inside',
    (_name, key) => {
      const marker = effectMarker(key);
      const body = commentBody(marker);
      expect(body).not.toContain('--');
      expect(body).not.toContain('>');
      expect(body).not.toContain('<');
      expect(body.startsWith('>')).toBe(false);
      expect(body.startsWith('->')).toBe(false);
      expect(marker.indexOf('-->')).toBe(marker.length - 3);
      expect(/\s/.test(body.trim())).toBe(false); // one token: whitespace is encoded
    },
  );

  it('matches exactly: a:b:1 is not a:b:10', () => {
    const text = `${effectMarker('a:b:10')} ${effectMarker('x:a:b:1')}`;
    const keys = findEffectMarkers(text);
    expect(keys).toEqual(['a:b:10', 'x:a:b:1']);
    expect(keys.includes('a:b:1')).toBe(false);
  });

  it('finds every marker in order, and nothing in text without markers or with malformed escapes', () => {
    expect(findEffectMarkers(`${effectMarker('one')}\n${effectMarker('two')}`)).toEqual(['one', 'two']);
    expect(findEffectMarkers('no marker <!-- other comment -->')).toEqual([]);
    // toStrictEqual: a malformed escape must leave no `undefined` entry behind (toEqual ignores one).
    expect(findEffectMarkers('<!-- chamvi:effect=%E0%A4%A -->')).toStrictEqual([]);
  });

  it('is the same marker for the same key (so alreadyApplied can search for it)', () => {
    expect(effectMarker('k--1')).toBe(effectMarker('k--1'));
    expect(effectMarker('k--1')).not.toBe(effectMarker('k-1'));
  });
});
