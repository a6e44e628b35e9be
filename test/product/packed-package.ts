// Helpers of the tests that install the package the way users do: the packed tarball, commands
// run in scratch folders outside the repo, and a clean environment for npm there.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './run-cli.js';

/**
 * The tests that install from the npm registry run when this is `1` (`.ci/run` sets it): they need
 * the registry and minutes, so a developer's `npm test` stays offline and fast.
 */
export const INSTALL_TESTS = process.env['CHAMVI_INSTALL_TESTS'] === '1';

export interface CommandResult {
  readonly code: number | null;
  readonly output: string;
  readonly ms: number;
}

/**
 * The environment of a command run for a user's app: this process's, without the `npm_*`
 * variables an enclosing `npm test` sets (they would point npm back at this repo), except the
 * npm cache every install shares.
 */
export function userEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => (!/^npm_/i.test(k) || /^npm_config_cache$/i.test(k)) && !/^(CHAMVI_|TEMPORAL_ADDRESS|NODE_ENV)/.test(k),
    ),
  );
  return { ...base, npm_config_update_notifier: 'false', npm_config_fund: 'false', ...extra };
}

/** Runs `command args` in `cwd` to completion (stdout and stderr interleaved in `output`). */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<CommandResult> {
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? userEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started });
    }),
  );
}

/**
 * npm's answer when a lock names a version the registry's copy of the package document does not
 * list yet: a version published minutes ago reaches the registry's replicas one by one, so one
 * install can lock it and the next, served by another replica, not find it.
 */
const NOT_YET_REPLICATED = /\bETARGET\b/;
const REPLICATION_WAIT_MS = 30_000;
const REPLICATION_TRIES = 4;

/**
 * Like {@link run}, but a non-zero exit throws with the command's output. A command npm failed
 * with ETARGET runs again after a wait, up to {@link REPLICATION_TRIES} times, since that is the
 * registry catching up, not the package.
 */
export async function runOk(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<CommandResult> {
  let result = await run(command, args, options);
  for (
    let tries = 1;
    tries < REPLICATION_TRIES && result.code !== 0 && NOT_YET_REPLICATED.test(result.output);
    tries++
  ) {
    console.log(`${command} ${args.join(' ')}: the registry does not list a locked version yet; again in 30 s`);
    await new Promise((r) => setTimeout(r, REPLICATION_WAIT_MS));
    result = await run(command, args, options);
  }
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} (in ${options.cwd}) exited ${result.code}:\n${result.output}`);
  }
  return result;
}

/** A new folder under the system temp folder: outside the repo, so nothing resolves from its node_modules. */
export function scratchDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Deletes a scratch folder (hundreds of MB of node_modules), unless CHAMVI_KEEP_SCRATCH=1 asks to look at it. */
export function removeScratch(dir: string): void {
  if (process.env['CHAMVI_KEEP_SCRATCH'] === '1') console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/**
 * The package as `npm pack` makes it (the `prepack` script builds it first). `CHAMVI_TARBALL` names
 * one packed already (`.ci/run` packs once for every test that needs it).
 */
export async function packedTarball(): Promise<string> {
  const given = process.env['CHAMVI_TARBALL'];
  if (given !== undefined && given !== '') return given;
  const dir = scratchDir('chamvi-pack-');
  const { output } = await runOk('npm', ['pack', '--pack-destination', dir, '--json'], {
    cwd: ROOT,
    env: userEnv(),
    timeoutMs: 180_000,
  });
  const name = (JSON.parse(output.slice(output.indexOf('[\n'))) as Array<{ filename: string }>)[0]?.filename;
  if (name === undefined) throw new Error(`npm pack printed no file name:\n${output}`);
  return join(dir, name);
}

/** Bytes under `dir`, following no symlinks (what `du -sb` counts, roughly). */
export function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/** Every installed copy of a package whose name starts with `scope`: name → [{ path, version }]. */
export function installedCopies(nodeModules: string, scope: string): Map<string, { path: string; version: string }[]> {
  const found = new Map<string, { path: string; version: string }[]>();
  const visit = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        for (const scoped of readdirSync(path, { withFileTypes: true })) {
          if (scoped.isDirectory()) visitPackage(join(path, scoped.name), `${entry.name}/${scoped.name}`);
        }
      } else if (entry.name !== '.bin' && entry.name !== '.cache') {
        visitPackage(path, entry.name);
      }
    }
  };
  const visitPackage = (path: string, name: string): void => {
    if (name.startsWith(scope)) {
      try {
        const { version } = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { version: string };
        found.set(name, [...(found.get(name) ?? []), { path, version }]);
      } catch {
        // a folder without package.json is no package
      }
    }
    visit(join(path, 'node_modules'));
  };
  visit(nodeModules);
  return found;
}
