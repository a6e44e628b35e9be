// Every TypeScript block users read is checked or says it is not: a block marked
// `<!-- file: <path> -->` is that file as it is, and the file is compiled (by `npm run typecheck`,
// by the consumer smoke test for examples/consumer, by `next build` for the chat example); a block
// marked `<!-- excerpt: <path> -->` is a run of that file's lines (compared without indentation:
// the page shows it unindented); a block marked `<!-- fragment -->` is a piece of code on purpose.
// An unmarked block fails here.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../product/run-cli.js';
import { writtenMarkdown } from './docs-pages.js';

interface Block {
  readonly file: string;
  readonly line: number;
  readonly lang: string;
  readonly marker: string | undefined;
  readonly body: string;
}

const TYPESCRIPT = new Set(['ts', 'tsx', 'typescript']);

/** The fenced blocks of `markdown`, each with the HTML comment right above it (blank lines apart). */
export function fencedBlocks(file: string, markdown: string): Block[] {
  return [...markdown.matchAll(/(?:<!-- ([^>]*?) -->\n+)?^```(\w*)[^\n]*\n([\s\S]*?)^```$/gm)].map((m) => ({
    file,
    line: markdown.slice(0, m.index).split('\n').length,
    lang: m[2] ?? '',
    marker: m[1],
    body: (m[3] ?? '').replace(/\n$/, ''),
  }));
}

/** Whether a file of the repository is compiled in CI, and by what. */
function compiledBy(path: string): string | undefined {
  if (path.startsWith('examples/consumer/')) return 'test/product/consumer-smoke.test.ts';
  if (/^examples\/chat\/(app|lib)\//.test(path)) return 'next build (test/chat/chat-app.test.ts)';
  const tsconfig = readFileSync(join(ROOT, 'tsconfig.json'), 'utf8');
  const excluded = [...tsconfig.matchAll(/^\s*"(examples\/[^"]+)",?$/gm)].map((m) => m[1] ?? '');
  const included = ['src/', 'test/', 'examples/', 'worker/', 'client/', 'workflows/', 'testing/'];
  if (excluded.some((e) => path === e || path.startsWith(`${e}/`))) return undefined;
  return included.some((dir) => path.startsWith(dir)) ? 'npm run typecheck' : undefined;
}

const blocks = writtenMarkdown().flatMap((file) => fencedBlocks(file, readFileSync(join(ROOT, file), 'utf8')));
const typescript = blocks.filter((b) => TYPESCRIPT.has(b.lang));

describe('the TypeScript blocks of the README and the docs', () => {
  it('finds the blocks of the README, the guides and the reference', () => {
    const files = new Set(typescript.map((b) => b.file));
    for (const file of ['README.md', 'docs/guides/chat.md', 'docs/get-started/testing.md'])
      expect({ file, found: files.has(file) }).toEqual({ file, found: true });
  });

  it('marks every block as a file of the repository or as a fragment', () => {
    const unmarked = typescript
      .filter((b) => b.marker === undefined || !/^((file|excerpt): \S+|fragment)$/.test(b.marker))
      .map((b) => `${b.file}:${b.line}`);
    expect(unmarked).toEqual([]);
  });

  it('shows each marked file as it is, and only files that CI compiles', () => {
    const marked = blocks.filter((b) => b.marker?.startsWith('file: '));
    for (const block of marked) {
      const path = (block.marker ?? '').slice('file: '.length);
      const at = `${block.file}:${block.line}`;
      expect({ at, path, exists: existsSync(join(ROOT, path)) }).toEqual({ at, path, exists: true });
      expect({ at, path, body: block.body }).toEqual({
        at,
        path,
        body: readFileSync(join(ROOT, path), 'utf8').replace(/\n$/, ''),
      });
      if (TYPESCRIPT.has(block.lang))
        expect({ at, path, compiled: compiledBy(path) !== undefined }).toEqual({ at, path, compiled: true });
    }
  });

  it('shows each excerpt as a run of lines of its file, and only of files that CI compiles', () => {
    const unindented = (text: string): string =>
      text
        .split('\n')
        .map((line) => line.trim())
        .join('\n');
    const excerpts = blocks.filter((b) => b.marker?.startsWith('excerpt: '));
    for (const block of excerpts) {
      const path = (block.marker ?? '').slice('excerpt: '.length);
      const at = `${block.file}:${block.line}`;
      expect({ at, path, exists: existsSync(join(ROOT, path)) }).toEqual({ at, path, exists: true });
      const file = unindented(readFileSync(join(ROOT, path), 'utf8'));
      expect({ at, path, inFile: file.includes(unindented(block.body)) }).toEqual({ at, path, inFile: true });
      if (TYPESCRIPT.has(block.lang))
        expect({ at, path, compiled: compiledBy(path) !== undefined }).toEqual({ at, path, compiled: true });
    }
  });
});
