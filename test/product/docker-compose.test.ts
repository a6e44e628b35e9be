import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseStoreSpec } from '../../src/stores/store-spec.js';
import { DEFAULT_ADDRESS, ENV } from '../../cli/settings.js';
import { findTemporalBinary } from '../../testing/temporal-binaries.js';
import { HEALTH_PORT_ENV } from '../../worker/worker-health.js';
import { compose, dockerfile, environment, ports, service } from './deploy-files.js';
import { ROOT } from './run-cli.js';

describe('docker-compose.yml stays in step with the worker', () => {
  const worker = environment('worker');

  it('sets every env var the CLI reads, and only names the CLI, the worker or the demo agents read', () => {
    for (const name of Object.values(ENV)) expect(Object.keys(worker)).toContain(name);
    const sources = ['cli/settings.ts', 'demo/agents.ts', 'demo/model.ts', 'worker/worker-health.ts']
      .map((f) => readFileSync(join(ROOT, f), 'utf8'))
      .join('\n');
    for (const name of Object.keys(worker)) expect(sources).toContain(name);
  });

  it('points the worker at the Temporal service on the port the CLI defaults to and the service publishes', () => {
    const [host, port] = (worker[ENV.address] ?? '').split(':');
    expect(host).toBe('temporal');
    expect(port).toBe(DEFAULT_ADDRESS.split(':')[1]);
    expect(ports('temporal')).toContain(`${port}:${port}`);
    // The web UI is on 8233, as with the demo and `temporal server start-dev`.
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

  it("runs the demo agents module, the image's app beside the installed package (which does not ship the demo)", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      name: string;
      bin: Record<string, string>;
      files: string[];
    };
    const installed = `node_modules/${pkg.name}/`;
    const agents = worker[ENV.agents] ?? '';
    expect(agents).toBe('demo/agents.js');
    expect(pkg.files.filter((f) => /(^|\/)demo$/.test(f))).toEqual([]);
    expect(existsSync(join(ROOT, agents.replace(/\.js$/, '.ts')))).toBe(true);
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    for (const folder of build.include) expect(dockerfile).toContain(`COPY ${folder} ./${folder}`);
    // The entry point is the package's own bin, run from where npm installed it.
    expect(dockerfile).toContain(`ENTRYPOINT ["node", "${installed}${pkg.bin['chamvi']?.replace(/^\.\//, '')}"]`);
  });

  it('pins every image and health-checks PostgreSQL, Temporal and the worker', () => {
    const images = [...compose.matchAll(/^\s+image: (\S+)$/gm), ...dockerfile.matchAll(/^FROM (\S+)/gm)].map(
      (m) => m[1] ?? '',
    );
    for (const image of images.filter((i) => !i.startsWith('chamvi-worker')))
      expect(image).toMatch(/:\d+\.\d+(\.\d+)?(-[a-z0-9-]+)?$/);
    for (const name of ['postgresql', 'temporal', 'worker']) expect(service(name).join('\n')).toContain('healthcheck:');
    expect(compose).toMatch(/^volumes:\n {2}postgres-data:/m);
  });

  it('runs temporalio/server on a schema admin-tools creates, checked with `temporal operator cluster health`', () => {
    expect(compose).not.toContain('temporalio/auto-setup');
    expect(compose).not.toContain('tctl');
    const image = (name: string): string | undefined =>
      service(name)
        .map((l) => /^ {4}image: (\S+)$/.exec(l)?.[1])
        .find((i) => i !== undefined);
    const serverVersion = image('temporal')?.replace('temporalio/server:', '');
    expect(image('temporal')).toMatch(/^temporalio\/server:\d+\.\d+\.\d+$/);
    for (const name of ['temporal-schema', 'temporal-namespace']) {
      expect(image(name)).toBe(`temporalio/admin-tools:${serverVersion}`);
    }
    expect(service('temporal-schema').join('\n')).toContain('temporal-sql-tool');
    expect(service('temporal').join('\n')).toContain("['CMD', 'temporal', 'operator', 'cluster', 'health'");
    expect(service('temporal').join('\n')).toMatch(/temporal-schema:\n\s+condition: service_completed_successfully/);
    expect(service('temporal-namespace').join('\n')).toContain('temporal operator namespace create -n default');
    expect(service('worker').join('\n')).toMatch(/temporal-namespace:\n\s+condition: service_completed_successfully/);
  });

  it("health-checks the worker through its own endpoint, on the port the worker's environment sets", () => {
    const check = service('worker').join('\n');
    expect(check).toContain(`fetch('http://127.0.0.1:${worker[HEALTH_PORT_ENV] ?? '?'}/health')`);
    expect(check).not.toMatch(/connect\(7233/);
    expect(dockerfile).toContain(`ENV ${HEALTH_PORT_ENV}=${worker[HEALTH_PORT_ENV] ?? '?'}`);
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
