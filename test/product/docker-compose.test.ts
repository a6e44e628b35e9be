import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseStoreSpec } from '../../src/index.js';
import { DEFAULT_ADDRESS, ENV } from '../../cli/settings.js';
import { findTemporalBinary } from '../../testing/temporal-binaries.js';
import { ROOT } from './run-cli.js';

const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

/** The lines of a top-level service (two-space indented key under `services:`), without YAML tooling. */
function service(name: string): string[] {
  const lines = compose.split('\n');
  const start = lines.indexOf(`  ${name}:`);
  if (start < 0) throw new Error(`docker-compose.yml has no service ${name}`);
  const end = lines.findIndex((l, i) => i > start && /^ {0,2}\S/.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** `KEY: value` pairs of a service's `environment:` block. */
function environment(name: string): Record<string, string> {
  const lines = service(name);
  const start = lines.indexOf('    environment:');
  const block = lines.slice(start + 1);
  const end = block.findIndex((l) => /^ {0,4}\S/.test(l));
  const entries = block
    .slice(0, end < 0 ? undefined : end)
    .map((l) => /^ {6}([A-Z0-9_]+): (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null);
  return Object.fromEntries(entries.map((m) => [m[1], (m[2] ?? '').replace(/^'(.*)'$/, '$1')])) as Record<
    string,
    string
  >;
}

function ports(name: string): string[] {
  return service(name)
    .map((l) => /^ {6}- '(\d+:\d+)'$/.exec(l)?.[1])
    .filter((p): p is string => p !== undefined);
}

describe('docker-compose.yml stays in step with the worker', () => {
  const worker = environment('worker');

  it('sets every env var the CLI reads, and only names the CLI or the demo agents read', () => {
    for (const name of Object.values(ENV)) expect(Object.keys(worker)).toContain(name);
    const cliSource = ['settings.ts', 'demo-agents.ts', 'demo-model.ts']
      .map((f) => readFileSync(join(ROOT, 'cli', f), 'utf8'))
      .join('\n');
    for (const name of Object.keys(worker)) expect(cliSource).toContain(name);
  });

  it('points the worker at the Temporal service on the port the CLI defaults to and the service publishes', () => {
    const [host, port] = (worker[ENV.address] ?? '').split(':');
    expect(host).toBe('temporal');
    expect(port).toBe(DEFAULT_ADDRESS.split(':')[1]);
    expect(ports('temporal')).toContain(`${port}:${port}`);
    // The web UI is on 8233, as with `chamvi dev` and `temporal server start-dev`.
    expect(ports('temporal-ui')).toContain('8233:8080');
  });

  it('uses the PostgreSQL service as the effect store', () => {
    const spec = parseStoreSpec(worker[ENV.store] ?? '');
    expect(spec.kind).toBe('postgres');
    const url = new URL(spec.kind === 'postgres' ? spec.url : 'x:');
    const pg = environment('postgresql');
    expect(url.hostname).toBe('postgresql');
    expect(url.port).toBe('5432');
    expect(url.pathname).toBe(`/${pg['POSTGRES_DB'] ?? ''}`);
    expect(decodeURIComponent(url.username)).toBe(pg['POSTGRES_USER']);
    expect(decodeURIComponent(url.password)).toBe(pg['POSTGRES_PASSWORD']);
    expect(environment('temporal')['DB']).toBe('postgres12');
  });

  it('runs an agents module the image builds, from the folders the Dockerfile copies', () => {
    const agents = worker[ENV.agents] ?? '';
    expect(agents).toMatch(/^dist\/cli\/.+\.js$/);
    expect(existsSync(join(ROOT, agents.replace(/^dist\//, '').replace(/\.js$/, '.ts')))).toBe(true);
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    for (const folder of build.include) expect(dockerfile).toContain(`COPY ${folder} ./${folder}`);
    expect(dockerfile).toMatch(/ENTRYPOINT \["node", "dist\/cli\/main\.js"\]/);
  });

  it('pins every image and health-checks PostgreSQL and Temporal', () => {
    const images = [...compose.matchAll(/^\s+image: (\S+)$/gm), ...dockerfile.matchAll(/^FROM (\S+)/gm)].map(
      (m) => m[1] ?? '',
    );
    for (const image of images.filter((i) => !i.startsWith('chamvi-worker')))
      expect(image).toMatch(/:\d+\.\d+(\.\d+)?(-[a-z0-9-]+)?$/);
    for (const name of ['postgresql', 'temporal', 'worker']) expect(service(name).join('\n')).toContain('healthcheck:');
    expect(compose).toMatch(/^volumes:\n {2}postgres-data:/m);
  });

  const dockerCompose = ['/usr/bin/docker-compose', '/usr/local/bin/docker-compose'].find((p) => existsSync(p));
  (dockerCompose ? it : it.skip)('is valid for docker-compose config', () => {
    execFileSync(dockerCompose ?? 'docker-compose', ['-f', join(ROOT, 'docker-compose.yml'), 'config', '-q'], {
      stdio: 'pipe',
    });
  });

  it('finds the temporal CLI the demo starts (scripts/dev.sh install puts it in .tools/py/bin)', () => {
    expect(findTemporalBinary('cli', ROOT)).toBeDefined();
  });
});
