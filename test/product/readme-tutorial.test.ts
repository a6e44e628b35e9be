// README.md for someone who installs the package: the Install section, the version matrix, the
// tutorial (whose code blocks are the files of examples/consumer, which consumer-smoke.test.ts
// installs, compiles and runs) and the two commands.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
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

/** The fenced blocks marked `<!-- file: examples/consumer/<path> -->`, by path. */
function markedBlocks(): Map<string, string[]> {
  const blocks = new Map<string, string[]>();
  for (const m of readme.matchAll(/<!-- file: (examples\/consumer\/\S+) -->\n+```[a-z]*\n([\s\S]*?)\n```\n/g)) {
    const path = m[1] ?? '';
    blocks.set(path, [...(blocks.get(path) ?? []), m[2] ?? '']);
  }
  return blocks;
}

function appFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? appFiles(join(dir, e.name)) : [relative(ROOT, join(dir, e.name))],
  );
}

describe('README.md for a user of the package', () => {
  it('starts with Install, whose npm install line names every required peer and the optional ones apart', () => {
    expect(/\n## (.+)\n/.exec(readme)?.[1]).toBe('Install');
    const install = section('Install');
    const [first, ...rest] = (/```sh\n([\s\S]*?)\n```/.exec(install)?.[1] ?? '').split('\n');
    const names = (first ?? '').split(/\s+/);
    expect(names.slice(0, 3)).toEqual(['npm', 'install', '@chamvi/temporal']);
    expect(names.slice(3).sort()).toEqual([...required].sort());
    expect(rest.join('\n')).toMatch(/^npm install pg\b/m);
    expect(rest.join('\n')).toMatch(/^npm install -D @temporalio\/testing\b/m);
  });

  it("states package.json's Node engine and peer ranges in its version matrix, and that it is ESM-only", () => {
    const install = section('Install');
    expect(install).toContain(`| Node `);
    expect(install).toContain(pkg.engines.node.replace('>=', '') + '+');
    for (const name of ['@temporalio/worker', 'ai', 'zod', 'pg']) {
      expect(install).toContain(`\`${(pkg.peerDependencies[name] ?? '?').replace('||', '\\|\\|')}\``);
    }
    expect(install).toContain('**ESM only.**');
    expect(install).toContain("await import('@chamvi/temporal')");
  });

  it('shows each file of examples/consumer once, as it is (the tutorial compiles and runs as written)', () => {
    const blocks = markedBlocks();
    const files = appFiles(CONSUMER).filter((f) => !f.endsWith('package.json'));
    expect([...blocks.keys()].sort()).toEqual(files.sort());
    for (const file of files) {
      expect({ file, blocks: blocks.get(file) }).toEqual({
        file,
        blocks: [readFileSync(join(ROOT, file), 'utf8').replace(/\n$/, '')],
      });
    }
    expect(section('Tutorial (5 minutes)')).toContain('<!-- file: examples/consumer/jest.config.js -->');
  });

  it('lists in the example app what Install and the tutorial tell a user to install', () => {
    const app = JSON.parse(readFileSync(join(CONSUMER, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(Object.keys(app.dependencies).sort()).toEqual(['@ai-sdk/openai', '@chamvi/temporal', ...required].sort());
    const tutorial = section('Tutorial (5 minutes)');
    for (const dev of ['jest', '@jest/globals', '@swc/jest', '@temporalio/testing']) {
      expect(Object.keys(app.devDependencies)).toContain(dev);
      expect(tutorial).toContain(dev);
    }
    expect(tutorial).toContain(`"test": "${app.scripts['test']}"`);
  });

  it('gives two commands that are really two, and package.json runs them through scripts/dev.sh', () => {
    const block = /```sh\n([\s\S]*?)\n```/.exec(section('Two commands'))?.[1] ?? '';
    const commands = block.split('\n').map((l) => l.replace(/#.*$/, '').trim());
    expect(commands).toEqual(['npm start', 'npm test']);
    expect(pkg.scripts['start']).toBe('bash scripts/dev.sh start');
    expect(pkg.scripts['test']).toBe('bash scripts/dev.sh test');
  });
});
