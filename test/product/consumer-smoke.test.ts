// The package as a user gets it: `npm pack`, installed in a temp folder outside the repo into the
// README tutorial's app (see readme-tutorial.test.ts): once a copy of examples/consumer with the
// lowest versions the peer ranges allow, once made as the README says (`npm init -y`, its commands,
// the newest versions). Needs the npm registry and minutes, so it runs when CHAMVI_INSTALL_TESTS=1
// (.ci/run sets it).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createDevServerEnvironment } from '../../testing/index.js';
import { startFakeResponsesApi, type FakeResponsesApi } from './fake-responses-api.js';
import {
  folderBytes,
  INSTALL_TESTS,
  installedCopies,
  packedTarball,
  removeScratch,
  run,
  runOk,
  scratchDir,
  userEnv,
  type CommandResult,
} from './packed-package.js';
import { ROOT } from './run-cli.js';
import { tutorialAppAsWritten } from './tutorial-app.js';

interface Manifest {
  name: string;
  version: string;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
const SDK = ['activity', 'client', 'common', 'plugin', 'worker', 'workflow'].map((p) => `@temporalio/${p}`);
const PG_URL = process.env['CHAMVI_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The lowest version a peer range admits: `^1.14.1` → `1.14.1`, `^3.25.76 || ^4.1.8` → `3.25.76`. */
function floor(range: string | undefined): string {
  const version = /(\d+\.\d+\.\d+)/.exec(range ?? '')?.[1];
  if (version === undefined) throw new Error(`no version in the peer range "${range}"`);
  return version;
}

interface Variant {
  readonly label: string;
  /** Spec per package the app declares (what `npm install` resolves). */
  readonly versions: Record<string, string>;
  /** Whether the app also installs pg (the optional peer) at the lowest version its range allows. */
  readonly pg: boolean;
  /**
   * Whether the app is made as the README says, in a fresh `npm init -y` folder with its commands
   * (which install the newest versions): else a copy of examples/consumer with `versions` declared.
   */
  readonly asWritten: boolean;
}

const peer = (name: string): string => pkg.peerDependencies[name] ?? '';
const VARIANTS: Variant[] = [
  {
    label: 'the lowest versions the peer ranges allow',
    versions: {
      ...Object.fromEntries([...SDK, '@temporalio/testing'].map((n) => [n, floor(peer(n))])),
      ai: floor(peer('ai')),
      zod: floor(peer('zod')),
      pg: floor(peer('pg')),
    },
    pg: true,
    asWritten: false,
  },
  {
    label: 'the newest versions the peer ranges allow',
    versions: {
      ...Object.fromEntries([...SDK, '@temporalio/testing'].map((n) => [n, peer(n)])),
      ai: peer('ai'),
      zod: peer('zod'),
      typescript: 'latest',
    },
    pg: false,
    asWritten: true,
  },
];

/** The newest version of `name` within `range`, as the registry says now. */
async function newest(name: string, range: string, cwd: string): Promise<string> {
  const { output } = await runOk('npm', ['view', `${name}@${range}`, 'version', '--json'], { cwd, timeoutMs: 60_000 });
  const parsed = JSON.parse(output) as string | string[];
  // The registry lists versions by publish date: a patch of an older line can come last.
  const numbers = (v: string): number[] => v.split(/[.-]/).map(Number);
  const byVersion = (a: string, b: string): number => {
    const [x, y] = [numbers(a), numbers(b)];
    for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
    return 0;
  };
  const last = (Array.isArray(parsed) ? parsed : [parsed]).sort(byVersion).at(-1);
  if (last === undefined) throw new Error(`no ${name}@${range} on the registry`);
  return last;
}

// Records every module specifier asked for and every file resolved, in the process and its workers.
const RECORD_LOADS = `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
registerHooks({
  resolve(specifier, context, next) {
    appendFileSync(process.env.RECORD_FILE, 'asked ' + specifier + ' from ' + context.parentURL + '\\n');
    const resolved = next(specifier, context);
    appendFileSync(process.env.RECORD_FILE, 'resolved ' + resolved.url + '\\n');
    return resolved;
  },
});
`;

const timings: string[] = [];

(INSTALL_TESTS ? describe : describe.skip)('the packed package in a fresh app outside the repo', () => {
  let tarball: string;
  let temporal: TestWorkflowEnvironment;
  const started = Date.now();

  beforeAll(async () => {
    const t0 = Date.now();
    [tarball, temporal] = await Promise.all([packedTarball(), createDevServerEnvironment()]);
    timings.push(`pack + dev server ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }, 300_000);

  afterAll(async () => {
    await temporal?.teardown();
    timings.push(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(`consumer smoke test: ${timings.join('; ')}`);
  });

  describe.each(VARIANTS)('with $label', (variant) => {
    let app: string;
    let install: CommandResult;

    beforeAll(async () => {
      if (variant.asWritten) {
        ({ app, install } = await tutorialAppAsWritten(scratchDir('chamvi-consumer-'), tarball));
        timings.push(`newest, as the README says: install ${(install.ms / 1000).toFixed(1)} s`);
        return;
      }
      app = join(scratchDir('chamvi-consumer-'), 'app');
      cpSync(join(ROOT, 'examples', 'consumer'), app, {
        recursive: true,
        filter: (src) => !/[/\\](node_modules|dist|\.chamvi)([/\\]|$)/.test(src),
      });
      const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as Manifest;
      const deps = { ...manifest.dependencies, [pkg.name]: `file:${tarball}` };
      const dev = { ...manifest.devDependencies };
      for (const [name, asked] of Object.entries(variant.versions)) {
        // npm ls calls a dist-tag in package.json invalid: declare the version it stands for.
        const spec = asked === 'latest' ? `^${await newest(name, 'latest', app)}` : asked;
        if (name in dev) dev[name] = spec;
        else deps[name] = spec;
      }
      manifest.dependencies = deps;
      manifest.devDependencies = dev;
      writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
      install = await run('npm', ['install', '--no-audit', '--no-fund'], {
        cwd: app,
        timeoutMs: 600_000,
      });
      timings.push(`${variant.pg ? 'lowest' : 'newest'}: install ${(install.ms / 1000).toFixed(1)} s`);
    }, 600_000);

    afterAll(() => {
      if (existsSync(join(app, 'node_modules'))) {
        const mb = folderBytes(join(app, 'node_modules')) / 1e6;
        timings.push(`${variant.pg ? 'lowest' : 'newest'}: node_modules ${mb.toFixed(0)} MB`);
      }
      removeScratch(dirname(app));
    });

    it('lives outside the repo, with no node_modules above it to resolve from', () => {
      expect(app.startsWith(ROOT)).toBe(false);
      for (let dir = dirname(app); dir !== dirname(dir); dir = dirname(dir)) {
        expect(existsSync(join(dir, 'node_modules'))).toBe(false);
      }
    });

    if (variant.asWritten) {
      it("declares, after the README's commands, what examples/consumer declares", () => {
        type Declared = Manifest & { type?: string; scripts?: Record<string, string> };
        const made = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as Declared;
        const shown = JSON.parse(readFileSync(join(ROOT, 'examples/consumer/package.json'), 'utf8')) as Declared;
        const names = (m: Declared) => ({
          type: m.type,
          scripts: m.scripts,
          dependencies: Object.keys(m.dependencies ?? {}).sort(),
          devDependencies: Object.keys(m.devDependencies ?? {}).sort(),
        });
        expect(names(made)).toEqual(names(shown));
      });
    }

    it('installs the tarball and its peers without ERESOLVE', () => {
      expect(install.output).not.toContain('ERESOLVE');
      expect(install.code).toBe(0);
    });

    it('has one copy of each @temporalio package, at the SDK version asked for', async () => {
      const copies = installedCopies(join(app, 'node_modules'), '@temporalio/');
      const expected = variant.pg
        ? floor(peer('@temporalio/worker'))
        : await newest('@temporalio/worker', peer('@temporalio/worker'), app);
      for (const name of [...SDK, '@temporalio/testing', '@temporalio/core-bridge', '@temporalio/proto']) {
        expect({ name, copies: copies.get(name)?.map((c) => c.version) }).toEqual({ name, copies: [expected] });
      }
      for (const [name, list] of copies) expect({ name, copies: list.length }).toEqual({ name, copies: 1 });
      const ls = await run('npm', ['ls', '--all', '--json'], { cwd: app, timeoutMs: 60_000 });
      expect(ls.code).toBe(0); // npm ls fails on missing, invalid or extraneous packages
    }, 120_000);

    it('compiles the tutorial with tsc --strict and skipLibCheck false (no unused imports either)', async () => {
      const tsconfig = JSON.parse(readFileSync(join(app, 'tsconfig.json'), 'utf8')) as {
        compilerOptions: Record<string, unknown>;
      };
      expect(tsconfig.compilerOptions).toMatchObject({ strict: true, skipLibCheck: false, noUnusedLocals: true });
      const tsc = await run(
        'node',
        ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--strict', '--skipLibCheck', 'false'],
        { cwd: app, timeoutMs: 180_000 },
      );
      const diagnostics = tsc.output.split('\n').filter((line) => line.trim() !== '');
      // Not ours: @ai-sdk/openai 4's .d.ts is written against zod 4.1's "zod/v4" types, which zod
      // 3.25 ships in an older shape; with zod 3 only those lines fail (README, Install, says so).
      const upstream = variant.versions['zod']?.startsWith('3.')
        ? diagnostics.filter((d) =>
            /^node_modules\/@ai-sdk\/openai\/dist\/index\.d\.ts\(\d+,\d+\): error TS2707: Generic type 'ZodDiscriminatedUnion<Options>'/.test(
              d,
            ),
          )
        : [];
      expect(diagnostics.filter((d) => !upstream.includes(d))).toEqual([]);
      expect(tsc.code).toBe(upstream.length === 0 ? 0 : 2);
      for (const file of ['tools', 'agents', 'worker', 'client', 'agents.test']) {
        expect(existsSync(join(app, 'dist', `${file}.js`))).toBe(true);
      }
    }, 240_000);

    it('imports the root entry point without loading pg', async () => {
      writeFileSync(join(app, 'record-loads.mjs'), RECORD_LOADS);
      const record = join(app, 'root-import.log');
      await runOk(
        'node',
        [
          '--import',
          './record-loads.mjs',
          '--input-type=module',
          '-e',
          "const m = await import('@chamvi/temporal'); if (typeof m.defineEffectTool !== 'function') process.exit(3);",
        ],
        { cwd: app, env: userEnv({ RECORD_FILE: record }), timeoutMs: 60_000 },
      );
      const loads = readFileSync(record, 'utf8').split('\n');
      expect(loads.some((l) => l.startsWith('asked @chamvi/temporal from '))).toBe(true);
      expect(loads.filter((l) => l.startsWith('asked pg ') || /\/node_modules\/pg\//.test(l))).toEqual([]);
    }, 90_000);

    it('imports @chamvi/temporal/client without loading @temporalio/worker or the workflow code', async () => {
      writeFileSync(join(app, 'record-loads.mjs'), RECORD_LOADS);
      const record = join(app, 'client-import.log');
      await runOk(
        'node',
        [
          '--import',
          './record-loads.mjs',
          '--input-type=module',
          '-e',
          "const c = await import('@chamvi/temporal/client'); if (typeof c.startAgentRun !== 'function' || typeof c.runUIMessageStream !== 'function' || typeof c.chatRoute !== 'function') process.exit(3);",
        ],
        { cwd: app, env: userEnv({ RECORD_FILE: record }), timeoutMs: 60_000 },
      );
      const loads = readFileSync(record, 'utf8').split('\n');
      expect(loads.some((l) => l.startsWith('resolved ') && l.includes('/node_modules/@temporalio/client/'))).toBe(
        true,
      );
      expect(
        loads.filter(
          (l) =>
            l.startsWith('resolved ') &&
            /\/node_modules\/@temporalio\/(worker|activity|testing|workflow|core-bridge)\/|\/@chamvi\/temporal\/dist\/(workflows|activities)\/|\/workflows-path\.js$/.test(
              l,
            ),
        ),
      ).toEqual([]);
    }, 90_000);

    it('loads from a CommonJS module with require() and with import()', async () => {
      const script = `const root = require('@chamvi/temporal');
import('@chamvi/temporal/worker').then((worker) => {
  if (typeof root.defineEffectTool !== 'function' || typeof worker.createAgentWorker !== 'function') process.exit(3);
  console.log('loaded');
});
`;
      writeFileSync(join(app, 'commonjs-user.cjs'), script);
      const { output } = await runOk('node', ['commonjs-user.cjs'], { cwd: app, timeoutMs: 60_000 });
      expect(output).toBe('loaded\n');
    }, 90_000);

    if (variant.pg) {
      it('records effects in PostgreSQL with the lowest pg the peer range allows, loading pg on first use', async () => {
        const table = `chamvi_smoke_${process.pid}_${Date.now()}`;
        const script = `import { createEffectStore } from '@chamvi/temporal/stores';
const store = createEffectStore(process.env.PG_URL, { table: '${table}' });
const key = 'smoke:pg';
const put = await store.put(key, { toolName: 'smoke', result: { ok: true }, origin: 'executed' });
const got = await store.get(key);
await store.close();
const { default: pg } = await import('pg');
const client = new pg.Client({ connectionString: process.env.PG_URL });
await client.connect();
await client.query('DROP TABLE IF EXISTS "${table}"');
await client.end();
console.log(JSON.stringify({ put: put.result, got: got?.result }));
`;
        writeFileSync(join(app, 'pg-store.mjs'), script);
        writeFileSync(join(app, 'record-loads.mjs'), RECORD_LOADS);
        const record = join(app, 'pg-store.log');
        const { output } = await runOk('node', ['--import', './record-loads.mjs', 'pg-store.mjs'], {
          cwd: app,
          env: userEnv({ PG_URL, RECORD_FILE: record }),
          timeoutMs: 60_000,
        });
        expect(JSON.parse(output.trim().split('\n').at(-1) ?? '')).toEqual({ put: { ok: true }, got: { ok: true } });
        const installed = JSON.parse(readFileSync(join(app, 'node_modules', 'pg', 'package.json'), 'utf8')) as {
          version: string;
        };
        expect(installed.version).toBe(floor(peer('pg')));
        // The hook that saw no pg above sees the library ask for it here, on first use.
        expect(readFileSync(record, 'utf8')).toMatch(/^asked pg from \S*\/node_modules\/@chamvi\/temporal\//m);
      }, 90_000);
    }

    /** The tutorial's worker and client at one TEMPORAL_ADDRESS: the client prints the answer and the comment. */
    async function runTutorial(extraEnv: Record<string, string>): Promise<void> {
      const env = userEnv({ TEMPORAL_ADDRESS: temporal.address, ...extraEnv });
      let worker: ChildProcess | undefined;
      try {
        worker = spawn('node', ['dist/worker.js'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let workerOutput = '';
        worker.stdout?.on('data', (c: Buffer) => (workerOutput += c.toString()));
        worker.stderr?.on('data', (c: Buffer) => (workerOutput += c.toString()));
        const client = await run('node', ['dist/client.js'], { cwd: app, env, timeoutMs: 90_000 });
        expect({ code: client.code, output: client.output, worker: client.code === 0 ? '' : workerOutput }).toEqual({
          code: 0,
          output: expect.stringMatching(/^Done\.\ncomment executed after 1 attempt\(s\): \S+:comment:42\n$/),
          worker: '',
        });
        expect(existsSync(join(app, '.chamvi', 'effects.db'))).toBe(true);
        const exited = new Promise<number | null>((resolve) => worker?.once('exit', (code) => resolve(code)));
        worker.kill('SIGINT');
        expect(await exited).toBe(0);
        worker = undefined;
      } finally {
        worker?.kill('SIGKILL');
      }
    }

    it("runs one agent on a dev server: the tutorial worker and client, on OpenAI's Responses API", async () => {
      const api: FakeResponsesApi = await startFakeResponsesApi();
      try {
        await runTutorial({ OPENAI_BASE_URL: api.baseUrl, OPENAI_API_KEY: 'sk-smoke-test' });
        expect(api.requests).toHaveLength(2);
      } finally {
        await api.close();
      }
    }, 150_000);

    it('runs the tutorial offline (OFFLINE=1: the scripted model, no API key)', async () => {
      await runTutorial({ OFFLINE: '1' });
    }, 150_000);

    it("passes the tutorial's time-skipping test (npm test)", async () => {
      const test = await run('npm', ['test'], { cwd: app, timeoutMs: 240_000 });
      expect({ code: test.code, tail: test.code === 0 ? '' : test.output.slice(-3000) }).toEqual({ code: 0, tail: '' });
      expect(test.output).toContain('✓ the responder comments on the issue once, then answers');
    }, 300_000);
  });
});
