// The worker image without Docker: the Dockerfile's steps after `npm pack` run in a scratch folder
// outside the repo (the build stage's app writing, then the runtime stage with its
// NODE_ENV=production), and its ENTRYPOINT + CMD start with docker-compose.yml's worker environment
// until compose's own health check of the worker passes. Needs the npm registry, so it runs when
// CHAMVI_INSTALL_TESTS=1 (.ci/run sets it).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import pg from 'pg';
import { ENV } from '../../cli/settings.js';
import { createDevServerEnvironment } from '../../testing/index.js';
import { HEALTH_PORT_ENV } from '../../worker/worker-health.js';
import { dockerEnv, dockerStage, environment, execForm, healthcheckTest } from './deploy-files.js';
import {
  folderBytes,
  INSTALL_TESTS,
  packedTarball,
  removeScratch,
  run,
  runOk,
  scratchDir,
  userEnv,
} from './packed-package.js';
import { ROOT } from './run-cli.js';

const PG_URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const build = dockerStage('build');
const runtime = dockerStage('runtime');
const PACK = 'npm pack --pack-destination /app';

/** A compose value with `${NAME:-default}` resolved the way compose does with NAME unset. */
const composeDefault = (value: string | undefined): string | undefined =>
  value?.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

(INSTALL_TESTS ? describe : describe.skip)('the worker image, its steps run without Docker', () => {
  const app = scratchDir('chamvi-image-');
  const database = `chamvi_image_${process.pid}`;
  let temporal: TestWorkflowEnvironment;
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const [tarball, env] = await Promise.all([packedTarball(), createDevServerEnvironment()]);
    temporal = env;
    // The build stage's `npm pack --pack-destination /app`, done once for every test that packs.
    copyFileSync(tarball, join(app, basename(tarball)));
  }, 300_000);

  afterAll(async () => {
    await temporal?.teardown();
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin?.end();
    removeScratch(app);
  });

  const shell = (command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<unknown> =>
    runOk('sh', ['-c', command], { cwd, env, timeoutMs: 600_000 });

  it("packs the package in the build stage and writes the worker's app next to the tarball", async () => {
    const runs = build.filter((i) => i.op === 'RUN').map((i) => i.args);
    const packAt = runs.indexOf(PACK);
    expect(packAt).toBeGreaterThan(0);
    const after = runs.slice(packAt + 1);
    expect(after.length).toBeGreaterThan(0);
    // The build stage's WORKDIR holds the repo's files; /app is where the runtime stage copies from.
    for (const command of after) await shell(command.replaceAll('/app', app), ROOT, userEnv());
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).toEqual(
      expect.arrayContaining(['@chamvi/temporal', '@temporalio/worker', 'ai', 'zod', 'pg', '@octokit/rest']),
    );
    expect(existsSync(join(app, 'package-lock.json'))).toBe(true);
    // The demo agents are the app's own code: the package does not ship them.
    expect(existsSync(join(app, 'demo', 'agents.js'))).toBe(true);
  }, 600_000);

  it('installs the app in the runtime stage with NODE_ENV=production: ai, zod, pg and the SDK are all there', async () => {
    expect(runtime).toContainEqual({ op: 'COPY', args: '--from=build /app ./' });
    const env = dockerEnv(runtime);
    expect(env['NODE_ENV']).toBe('production');
    for (const { args } of runtime.filter((i) => i.op === 'RUN')) {
      // The image empties its npm cache; here that cache is the machine's, shared with every other
      // install, and may hold a packument older than the build stage's lock (the image starts with
      // none): revalidate it, as an empty cache would fetch it.
      const command = args
        .replace(/\s*&&\s*npm cache clean --force/, '')
        .replace(/^npm ci /, 'npm ci --prefer-online ');
      await shell(command, app, userEnv(env));
    }
    for (const name of [
      '@chamvi/temporal',
      '@temporalio/worker',
      'ai',
      'zod',
      'pg',
      '@ai-sdk/openai',
      '@octokit/rest',
    ]) {
      expect({ name, installed: existsSync(join(app, 'node_modules', name, 'package.json')) }).toEqual({
        name,
        installed: true,
      });
    }
    expect(existsSync(join(app, 'node_modules', '@temporalio', 'testing'))).toBe(false);
    console.log(`image runtime stage: node_modules ${(folderBytes(join(app, 'node_modules')) / 1e6).toFixed(0)} MB`);
  }, 600_000);

  it("starts the entry point with compose's worker environment until compose's health check passes", async () => {
    const entry = [
      ...execForm(runtime.find((i) => i.op === 'ENTRYPOINT')),
      ...execForm(runtime.find((i) => i.op === 'CMD')),
    ];
    expect(entry.slice(0, 1)).toEqual(['node']);
    const port = await freePort();
    const composed = Object.fromEntries(Object.entries(environment('worker')).map(([k, v]) => [k, composeDefault(v)]));
    const env = userEnv({
      ...dockerEnv(runtime),
      ...composed,
      // The compose network's names, as seen from here.
      [ENV.address]: temporal.address,
      [ENV.store]: PG_URL.replace(/\/[^/]*$/, `/${database}`),
      [HEALTH_PORT_ENV]: String(port),
      // Takes the demo model's @ai-sdk/openai branch, so that import has to resolve too.
      OPENAI_API_KEY: 'sk-image-test',
    });
    const check = healthcheckTest('worker');
    expect(check.slice(0, 2)).toEqual(['CMD', 'node']);
    const probe = (): Promise<number | null> =>
      run(
        check[1] ?? 'node',
        check.slice(2).map((a) => a.replace(`:${composed[HEALTH_PORT_ENV]}/`, `:${port}/`)),
        {
          cwd: app,
          timeoutMs: 10_000,
        },
      ).then((r) => r.code);
    expect(await probe()).toBe(1); // nothing answers before the worker runs

    let worker: ChildProcess | undefined = spawn(entry[0] ?? 'node', entry.slice(1), {
      cwd: app,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    worker.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    worker.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => worker?.once('exit', (code) => resolve(code)));
    try {
      let healthy = false;
      for (let i = 0; i < 120 && !healthy && worker.exitCode === null; i++) {
        healthy = (await probe()) === 0;
        if (!healthy) await new Promise((r) => setTimeout(r, 500));
      }
      expect({ healthy, output: healthy ? '' : output }).toEqual({ healthy: true, output: '' });
      expect(output).toContain('ready');
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
      worker = undefined;
      expect(await probe()).toBe(1);
    } finally {
      worker?.kill('SIGKILL');
    }
  }, 180_000);
});
