// docker-compose.yml and the Dockerfile read without YAML or Docker tooling: what the tests that
// keep them in step with the code (docker-compose.test.ts) and the test that runs the image's steps
// without Docker (image-runtime.test.ts) need.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './run-cli.js';

export const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
export const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

/** The lines of a top-level service (two-space indented key under `services:`). */
export function service(name: string): string[] {
  const lines = compose.split('\n');
  const start = lines.indexOf(`  ${name}:`);
  if (start < 0) throw new Error(`docker-compose.yml has no service ${name}`);
  const end = lines.findIndex((l, i) => i > start && /^ {0,2}\S/.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/**
 * `KEY: value` pairs of a service's `environment:` block, as written (`${X:-default}` left as is).
 * A key without a value (`KEY:`, passed on from the host when set there) maps to `undefined`.
 */
export function environment(name: string): Record<string, string | undefined> {
  const lines = service(name);
  const start = lines.indexOf('    environment:');
  const block = lines.slice(start + 1);
  const end = block.findIndex((l) => /^ {0,4}\S/.test(l));
  const entries = block
    .slice(0, end < 0 ? undefined : end)
    .map((l) => /^ {6}([A-Z0-9_]+):(?: (.*))?$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null);
  return Object.fromEntries(
    entries.map((m): [string, string | undefined] => [m[1] ?? '', m[2]?.replace(/^'(.*)'$/, '$1')]),
  );
}

/** `host:container` port pairs a service publishes. */
export function ports(name: string): string[] {
  return service(name)
    .map((l) => /^ {6}- '(\d+:\d+)'$/.exec(l)?.[1])
    .filter((p): p is string => p !== undefined);
}

/** The `test:` list of a service's healthcheck (`- item` lines, quotes removed). */
export function healthcheckTest(name: string): string[] {
  const lines = service(name);
  const start = lines.indexOf('      test:');
  if (start < 0) throw new Error(`service ${name} has no multi-line healthcheck test`);
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^ {8}- (.*)$/.exec(line);
    if (m === null) break;
    items.push((m[1] ?? '').replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1'));
  }
  return items;
}

/** One instruction of a Dockerfile stage (continuation lines joined). */
export interface DockerInstruction {
  readonly op: string;
  readonly args: string;
}

/** The instructions of the stage `FROM … AS <name>`. */
export function dockerStage(name: string): DockerInstruction[] {
  const joined = dockerfile.replace(/\\\n\s*/g, '');
  const instructions = joined
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))
    .map((l) => {
      const m = /^(\S+)\s+(.*)$/.exec(l.trim());
      return { op: (m?.[1] ?? '').toUpperCase(), args: m?.[2] ?? '' };
    });
  const start = instructions.findIndex((i) => i.op === 'FROM' && new RegExp(`\\sAS\\s+${name}$`, 'i').test(i.args));
  if (start < 0) throw new Error(`the Dockerfile has no stage ${name}`);
  const end = instructions.findIndex((i, n) => n > start && i.op === 'FROM');
  return instructions.slice(start + 1, end < 0 ? undefined : end);
}

/** `ENV KEY=value` instructions of a stage. */
export function dockerEnv(stage: DockerInstruction[]): Record<string, string> {
  return Object.fromEntries(
    stage
      .filter((i) => i.op === 'ENV')
      .map((i) => /^([A-Z0-9_]+)=(.*)$/.exec(i.args))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1] ?? '', m[2] ?? '']),
  );
}

/** An exec-form instruction's list (`["node", "x.js"]`). */
export function execForm(instruction: DockerInstruction | undefined): string[] {
  if (instruction === undefined) return [];
  return JSON.parse(instruction.args) as string[];
}
