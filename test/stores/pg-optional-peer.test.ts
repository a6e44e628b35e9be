import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';

// `pg` is an optional peer: only PostgreSQL users install it. A process without it must import
// the library, and only a PostgreSQL store's first statement may ask for it.

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'chamvi-no-pg-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function filesUnder(dir: string, ending: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(ending))
    .map((f) => join(dir, f));
}

describe('pg is an optional peer', () => {
  it('the root entry point loads without pg, and a PostgreSQL store without it fails with MissingPeerDependencyError naming npm install pg', () => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'test/stores/fixtures/without-pg.ts')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).not.toMatch(/Error/);
    const report = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}') as {
      afterRootImport: string[];
      first: { name: string; message: string; retryable: boolean; missing: boolean };
      second: { name: string; missing: boolean };
    };
    expect(report.afterRootImport).toEqual([]);
    expect(report.first).toEqual({
      name: 'MissingPeerDependencyError',
      message:
        'The PostgreSQL effect store needs the package "pg", which is not installed. Run `npm install pg` in your project.',
      retryable: false,
      missing: true,
    });
    expect(report.second).toMatchObject({ name: 'MissingPeerDependencyError', missing: true });
  });

  it('no module under src imports pg statically, and no declaration of src names a pg type', () => {
    const sources = filesUnder(join(root, 'src'), '.ts');
    const staticImport = /^\s*(?:import|export)\s[^;]*?from\s+['"]pg(?:\/[^'"]*)?['"]/m;
    expect(sources.filter((f) => staticImport.test(readFileSync(f, 'utf8')))).toEqual([]);

    const outDir = join(scratch, 'decl');
    const tsconfig = join(scratch, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: {
          outDir,
          rootDir: root,
          noEmit: false,
          declaration: true,
          emitDeclarationOnly: true,
          types: ['node'],
        },
        include: [join(root, 'src')],
      }),
    );
    spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    const declarations = filesUnder(join(outDir, 'src'), '.d.ts');
    expect(declarations.length).toBeGreaterThan(20);
    const namesPg = /(?:from\s+['"]pg['"]|import\(\s*['"]pg['"]\s*\))/;
    expect(declarations.filter((f) => namesPg.test(readFileSync(f, 'utf8')))).toEqual([]);
  }, 180_000);
});
