// README.md for someone who installs the package: the Install section, the version matrix (on the
// docs site's Install page), the tutorial (whose blocks are the files of examples/consumer, which
// consumer-smoke.test.ts installs, compiles and runs) and the two commands.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { docPage } from '../docs/docs-pages.js';
import { markedBlocks } from './readme-blocks.js';
import { ROOT } from './run-cli.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const CONSUMER = join(ROOT, 'examples', 'consumer');
const required = Object.keys(pkg.peerDependencies).filter((n) => pkg.peerDependenciesMeta[n]?.optional !== true);

/** A `## ` section's text, up to the next `## ` heading. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no section "${title}"`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The `npm install` lines of a page's first sh block, comments cut. */
function installLines(markdown: string): string[] {
  const block = /```sh\n([\s\S]*?)\n```/.exec(markdown)?.[1] ?? '';
  return block.split('\n').map((line) => line.replace(/#.*$/, '').trim());
}

function appFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? appFiles(join(dir, e.name)) : [relative(ROOT, join(dir, e.name))],
  );
}

describe('README.md for a user of the package', () => {
  it('is short: at most about 300 lines, with the tutorial in it', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(320);
    expect(readme).toContain('\n## Tutorial\n');
  });

  it('starts with Install, whose npm install line names every required peer and the optional ones apart', () => {
    expect(/\n## (.+)\n/.exec(readme)?.[1]).toBe('Install');
    const [first, , , pg] = installLines(section('Install'));
    const names = (first ?? '').split(/\s+/);
    expect(names.slice(0, 3)).toEqual(['npm', 'install', '@chamvi/temporal']);
    expect(names.slice(3).sort()).toEqual([...required].sort());
    expect(pg).toBe('npm install pg');
    // The docs site's Install page gives the same commands.
    expect(installLines(docPage('get-started/install.md'))).toEqual(installLines(section('Install')));
  });

  it("states package.json's Node engine and peer ranges in its version matrix, and that it is ESM-only", () => {
    const install = docPage('get-started/install.md');
    expect(install).toContain(`| Node `);
    expect(install).toContain(pkg.engines.node.replace('>=', '') + '+');
    for (const name of ['@temporalio/worker', 'ai', 'zod', 'pg']) {
      expect(install).toContain(`\`${(pkg.peerDependencies[name] ?? '?').replace('||', '\\|\\|')}\``);
    }
    expect(install).toContain('## ESM only');
    expect(install).toContain("await import('@chamvi/temporal')");
    expect(section('Install')).toContain('**ESM only**');
    for (const name of ['@temporalio/worker', 'ai', 'zod', 'pg']) {
      expect(section('Install')).toContain(`\`${(pkg.peerDependencies[name] ?? '?').replace('||', '\\|\\|')}\``);
    }
  });

  it('shows each file of examples/consumer once, as it is (the tutorial compiles and runs as written)', () => {
    const blocks = markedBlocks(readme);
    const files = appFiles(CONSUMER);
    expect(files).toContain('examples/consumer/package.json');
    expect([...blocks.keys()].filter((path) => path.startsWith('examples/consumer/')).sort()).toEqual(files.sort());
    for (const file of files) {
      expect({ file, blocks: blocks.get(file) }).toEqual({
        file,
        blocks: [readFileSync(join(ROOT, file), 'utf8').replace(/\n$/, '')],
      });
    }
    expect(section('Tutorial')).toContain('<!-- file: examples/consumer/jest.config.js -->');
  });

  it("is the docs site's tutorial page too, which includes the README's tutorial region", () => {
    const region =
      /<!-- #region tutorial -->\n([\s\S]*)<!-- #endregion tutorial -->/.exec(section('Tutorial'))?.[1] ?? '';
    for (const file of appFiles(CONSUMER)) expect(region).toContain(`<!-- file: ${file} -->`);
    expect(docPage('get-started/tutorial.md')).toContain('<!--@include: ../../README.md#tutorial-->');
  });

  it('has the example app declare what Install and the tutorial install and set, in a fresh npm init -y app', () => {
    const app = JSON.parse(readFileSync(join(CONSUMER, 'package.json'), 'utf8')) as {
      type: string;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    const [first = '', second = '', dev = ''] = installLines(section('Install'));
    const names = (line: string, skip: number): string[] =>
      line
        .split(/\s+/)
        .slice(skip)
        .map((spec) => spec.replace(/(.)@[^@]*$/, '$1'));
    expect(Object.keys(app.dependencies).sort()).toEqual([...names(first, 2), ...names(second, 2)].sort());
    expect(Object.keys(app.devDependencies).sort()).toEqual(names(dev, 3).sort());
    expect(dev.startsWith('npm install -D ')).toBe(true);
    const tutorial = section('Tutorial');
    expect(tutorial).toContain('npm init -y');
    const set = /^npm pkg set (.*)$/m.exec(tutorial)?.[1] ?? '';
    expect(set).toBe(`type=${app.type} scripts.build=${app.scripts['build']} scripts.test="${app.scripts['test']}"`);
    expect(Object.keys(app.scripts).sort()).toEqual(['build', 'test']);
  });

  it('gives two commands that are really two, and package.json runs them through scripts/dev.sh', () => {
    const block = /```sh\n([\s\S]*?)\n```/.exec(section('Two commands'))?.[1] ?? '';
    const commands = block.split('\n').map((l) => l.replace(/#.*$/, '').trim());
    expect(commands).toEqual(['npm start', 'npm test']);
    expect(pkg.scripts['start']).toBe('bash scripts/dev.sh start');
    expect(pkg.scripts['test']).toBe('bash scripts/dev.sh test');
  });
});
