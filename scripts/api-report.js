// The public API gate, on the output of `npm run build`:
// 1. API Extractor writes one report per entry point of package.json's "exports" to etc/api/;
//    `npm run api` fails when a report differs from the committed one (so a change of the public API
//    is a visible diff in review); `npm run api -- --local` writes the new reports instead;
//    it also fails when a report marks a public symbol "(undocumented)": every export and member
//    has a documentation comment, which the docs site's API reference renders (scripts/docs.js);
// 2. @arethetypeswrong/cli checks the packed package resolves, with types, on every entry point for
//    ESM under Node and bundlers (the package is ESM only, so CommonJS resolution is not checked).
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import console from 'node:console';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const local = process.argv.includes('--local');
const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8'));
const base = ExtractorConfig.loadFile(`${root}/api-extractor.json`);

let failed = 0;
for (const [subpath, target] of Object.entries(pkg.exports)) {
  if (typeof target !== 'object' || target.types === undefined) continue;
  // "." -> chamvi-temporal, "./stores/sqlite" -> chamvi-temporal-stores-sqlite
  const name = [
    'chamvi-temporal',
    ...subpath
      .replace(/^\.\/?/, '')
      .split('/')
      .filter(Boolean),
  ].join('-');
  const config = ExtractorConfig.prepare({
    configObject: {
      ...base,
      mainEntryPointFilePath: `${root}/${target.types.replace(/^\.\//, '')}`,
      apiReport: { ...base.apiReport, reportFileName: `${name}.api.md` },
    },
    configObjectFullPath: `${root}/api-extractor.json`,
    packageJsonFullPath: `${root}/package.json`,
  });
  const result = Extractor.invoke(config, { localBuild: local, showVerboseMessages: false });
  if (!result.succeeded) {
    failed++;
    console.error(
      `api: ${subpath}: ${result.apiReportChanged ? `the public API changed (etc/api/${name}.api.md); run npm run api -- --local and commit the report` : `${result.errorCount} error(s)`}`,
    );
  } else
    console.log(
      `api: ${subpath}: ${result.apiReportChanged ? `report written to etc/api/${name}.api.md` : 'unchanged'}`,
    );
}

// Every public symbol is documented: API Extractor marks the others "(undocumented)" in the report.
for (const file of readdirSync(join(root, 'etc/api')).filter((f) => f.endsWith('.api.md'))) {
  const lines = readFileSync(join(root, 'etc/api', file), 'utf8').split('\n');
  const undocumented = lines.flatMap((line, i) =>
    /^\s*\/\/.*\(undocumented\)/.test(line) ? [lines[i + 1]?.trim()] : [],
  );
  if (undocumented.length > 0) {
    failed++;
    console.error(
      `api: etc/api/${file}: ${undocumented.length} public symbol(s) without a documentation comment (add one in the source): ${undocumented.slice(0, 5).join(' | ')}${undocumented.length > 5 ? ' | …' : ''}`,
    );
  }
}

// The package as npm would publish it (already built: no prepack), checked by attw.
const packDir = mkdtempSync(join(tmpdir(), 'chamvi-api-'));
try {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const [packed] = JSON.parse(
    execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], {
      cwd: root,
      encoding: 'utf8',
    }),
  );
  execFileSync(
    join(root, 'node_modules/.bin/attw'),
    ['--profile', 'esm-only', '--format', 'table-flipped', join(packDir, packed.filename)],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  console.log('api: the packed package resolves on every entry point (attw, ESM)');
} catch (error) {
  failed++;
  console.error(`api: attw: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
} finally {
  rmSync(packDir, { recursive: true, force: true });
}
process.exit(failed === 0 ? 0 : 1);
