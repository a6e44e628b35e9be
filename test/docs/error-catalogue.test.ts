// The docs site's error catalogue (docs/reference/errors.md, written by scripts/docs.js) is read
// from the failure catalogue's source: every entry, with its policy, and nothing else.
import { describe, expect, it } from '@jest/globals';
import { FAILURE_CATALOGUE } from '../../src/errors/failure-policy.js';
import { ROOT } from '../product/run-cli.js';
// @ts-expect-error scripts/ is plain JavaScript without declarations
import { catalogueEntries, errorCatalogue } from '../../scripts/docs-errors.js';

interface Entry {
  readonly name: string;
  readonly doc: string;
  readonly retried: string;
  readonly then: string;
}

const entries = (catalogueEntries as (root: string) => Entry[])(ROOT);

describe('the error catalogue page', () => {
  it('has every catalogued failure once, with its policy and its doc comment', () => {
    expect(entries.map((e) => e.name)).toEqual(Object.keys(FAILURE_CATALOGUE));
    for (const e of entries) {
      const policy = FAILURE_CATALOGUE[e.name as keyof typeof FAILURE_CATALOGUE];
      expect({ name: e.name, retried: e.retried, then: e.then }).toEqual({
        name: e.name,
        retried: typeof policy.retried === 'string' ? `'${policy.retried}'` : String(policy.retried),
        then: policy.then,
      });
      expect({ name: e.name, doc: e.doc.length > 10 }).toEqual({ name: e.name, doc: true });
    }
  });

  it('shows one row per failure', () => {
    const page = (errorCatalogue as (root: string) => string)(ROOT);
    for (const name of Object.keys(FAILURE_CATALOGUE)) expect(page).toContain(`| \`${name}\` |`);
    expect(page.split('\n').filter((line) => line.startsWith('| `'))).toHaveLength(entries.length);
  });
});
