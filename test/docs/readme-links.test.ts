// The README and CONTRIBUTING.md are read on GitHub and npm, outside the docs site (whose build
// checks its own links): their relative links must name files of the repository.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../product/run-cli.js';

describe('the links of README.md and CONTRIBUTING.md', () => {
  it.each(['README.md', 'CONTRIBUTING.md'])('%s links only to files that exist', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((m) => m[1] ?? '')
      .filter((target) => !/^[a-z]+:/.test(target));
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((target) => !existsSync(join(ROOT, target)))).toEqual([]);
  });

  it('links the README to every section of the docs site', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const page of ['get-started/testing', 'concepts/guarantees', 'guides/chat', 'operations/deployment'])
      expect(readme).toContain(`(docs/${page}.md)`);
    expect(readme).toContain('(docs/reference/index.md)');
    expect(readme).toContain('(CONTRIBUTING.md)');
  });
});
