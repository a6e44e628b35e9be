// The Markdown users read, for the tests that hold it to the code: README.md, CONTRIBUTING.md and
// the docs site's pages as written (not the pages scripts/docs.js generates).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../product/run-cli.js';

/** Pages scripts/docs.js writes at build time (git-ignored). */
const GENERATED = [
  'docs/reference/api/',
  'docs/reference/errors.md',
  'docs/reference/cli-help.md',
  'docs/changelog.md',
];

/** A page of the docs site, by its path under docs/. */
export function docPage(path: string): string {
  return readFileSync(join(ROOT, 'docs', path), 'utf8');
}

/** Every hand-written Markdown file users read, by path from the repository's root. */
export function writtenMarkdown(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) return e.name.startsWith('.') ? [] : walk(path);
      return e.name.endsWith('.md') ? [path] : [];
    });
  const docs = walk('docs').filter((path) => !GENERATED.some((g) => path === g || path.startsWith(g)));
  return ['README.md', 'CONTRIBUTING.md', ...docs].filter((path) => existsSync(join(ROOT, path)));
}
