#!/usr/bin/env node
// Writes the worker image's app (the Dockerfile runs it in its build stage, test/product/image-runtime.test.ts
// in a scratch folder): a package.json in <dir> that depends on the packed tarball there
// (`npm pack --pack-destination <dir>`) and on what the image's worker needs beside it, as a user
// installs them: the Temporal SDK, ai and zod (peers), pg (the compose store is PostgreSQL), and the
// demo agents' own packages (@ai-sdk/openai, @octokit/rest); and the demo agents module, compiled
// (dist/demo: agents.js and what it imports), in <dir>/demo. The package does not ship the demo:
// it is the image's app, importing @chamvi/temporal by name. Versions are the ones this repo
// develops against.
//   node scripts/image-app.js <dir>
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const fail = (message, code = 1) => {
  process.stderr.write(`${message}\n`);
  process.exit(code);
};

const dir = process.argv[2];
if (dir === undefined) {
  fail('usage: node scripts/image-app.js <dir with the packed tarball>', 2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const tarball = `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`;
if (!existsSync(join(dir, tarball))) {
  fail(`image-app: ${join(dir, tarball)} is missing; run npm pack --pack-destination ${dir} first`);
}
// @temporalio/testing is a test tool: an optional peer the worker does not load.
const IMAGE_OPTIONAL = ['pg'];
// What the demo agents import besides the package and its peers.
const DEMO_PACKAGES = ['@ai-sdk/openai', '@octokit/rest'];
// The demo agents module and the modules it imports (demo/agents.ts).
const DEMO_MODULES = ['agents.js', 'model.js', 'tools.js'];
const optional = pkg.peerDependenciesMeta ?? {};
const names = [
  ...Object.keys(pkg.peerDependencies).filter(
    (name) => optional[name]?.optional !== true || IMAGE_OPTIONAL.includes(name),
  ),
  ...DEMO_PACKAGES,
].sort();
const dependencies = { [pkg.name]: `file:${tarball}` };
for (const name of names) {
  const version = pkg.devDependencies[name];
  if (version === undefined) {
    fail(`image-app: ${name} has no devDependency in package.json to take its version from`);
  }
  dependencies[name] = version;
}
mkdirSync(join(dir, 'demo'), { recursive: true });
for (const module of DEMO_MODULES) {
  const compiled = join(root, 'dist', 'demo', module);
  if (!existsSync(compiled)) fail(`image-app: ${compiled} is missing; run npm run build (npm pack does) first`);
  copyFileSync(compiled, join(dir, 'demo', module));
}
const app = {
  name: 'chamvi-worker',
  version: pkg.version,
  private: true,
  description: `The chamvi worker image: ${pkg.name} ${pkg.version} with its peers, and the demo agents`,
  type: 'module',
  dependencies,
};
writeFileSync(join(dir, 'package.json'), `${JSON.stringify(app, null, 2)}\n`);
process.stdout.write(
  `image-app: ${join(dir, 'package.json')}: ${Object.keys(dependencies).join(', ')}; demo/${DEMO_MODULES.join(', demo/')}\n`,
);
