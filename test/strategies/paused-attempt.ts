import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { createToolContext } from '../../src/context/tool-context.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import type { PausedAttemptConfig } from './fixtures/paused-attempt-child.js';
import { buildTool, observeFence, type ToolSpec } from './fixtures/strategy-tools.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How one attempt of a call ended, as the test reads it. */
export interface AttemptOutcome {
  readonly ok: boolean;
  readonly result?: unknown;
  readonly error?: { readonly name: string; readonly message: string };
  /** The protocol's outcome (`executed`, `reconciled`, `recorded`), when the call got that far. */
  readonly outcome?: string;
  /** The fence of the claim `execute` ran under (`effectFenceOf`). */
  readonly fence?: number;
  /** What the remote answered to each write of this attempt (see `BuiltTool.writes`). */
  readonly writes: readonly unknown[];
  readonly warnings: readonly string[];
}

/** Attempt A, stopped (SIGSTOP) right before its remote write. */
export interface PausedAttempt {
  readonly pid: number;
  /** git only, after {@link resume}: what the held `git push` wrapper logged (`held`, `released` per push). */
  pushLog(): string;
  /** Lets the remote write go, continues the process (SIGCONT) and waits for its outcome. */
  resume(): Promise<AttemptOutcome>;
  /** Kills the process if it is still there (test cleanup). */
  kill(): void;
}

/** What both attempts share. */
export interface AttemptSetup {
  readonly spec: ToolSpec;
  /** The SQLite file both attempts use as effect store (two processes, one store). */
  readonly storePath: string;
  readonly leaseMs: number;
  readonly runId: string;
  readonly toolName: string;
  readonly input: unknown;
}

/**
 * Starts attempt A in its own process and stops it with SIGSTOP once it reaches the remote write
 * (after every ownership check of the protocol). Its lease keeper is stopped with it, so the lease
 * runs out and attempt B can take the key over. For the git tool the `git push` itself is held,
 * by a `git` wrapper first on the child's PATH.
 */
export async function startPausedAttempt(setup: AttemptSetup): Promise<PausedAttempt> {
  const pauseDir = await mkdtemp(join(tmpdir(), 'chamvi-paused-'));
  const env = { ...process.env };
  if (setup.spec.kind === 'git') env['PATH'] = `${await gitPushHolder(pauseDir)}:${env['PATH'] ?? ''}`;
  const config: PausedAttemptConfig = { ...setup, pauseDir };
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(here, 'fixtures', 'paused-attempt-child.ts'), JSON.stringify(config)],
    { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));

  const deadline = Date.now() + 60_000;
  while (!existsSync(join(pauseDir, 'at-write'))) {
    if (gone) throw new Error(`attempt A exited before its remote write:\n${stdout}\n${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`attempt A never reached its remote write:\n${stdout}\n${stderr}`);
    }
    await sleep(5);
  }
  await stopOutsideStoreWrite(child, setup.storePath);
  let pushes = '';
  return {
    pid: child.pid!,
    pushLog: () => pushes,
    async resume() {
      await writeFile(join(pauseDir, 'go'), '');
      signal(child, 'SIGCONT');
      const code = await exited;
      pushes = await readFile(join(pauseDir, 'push.log'), 'utf8').catch(() => '');
      await rm(pauseDir, { recursive: true, force: true });
      const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || line === undefined) throw new Error(`attempt A exited with ${code}:\n${stdout}\n${stderr}`);
      return JSON.parse(line.slice('RESULT '.length)) as AttemptOutcome;
    },
    kill() {
      if (!gone) {
        signal(child, 'SIGCONT');
        child.kill('SIGKILL');
      }
      void rm(pauseDir, { recursive: true, force: true });
    },
  };
}

/**
 * Attempt B in this process: the same tool and store, a fresh claim. Its claim waits for A's
 * lease to run out (up to the default busy wait) and then takes the key over, with a higher fence.
 */
export async function runAttempt(setup: AttemptSetup): Promise<AttemptOutcome> {
  const store = new SqliteEffectStore(setup.storePath);
  const built = await buildTool(setup.spec);
  let fence: number | undefined;
  const observed = observeFence(built.tool, (f) => (fence = f));
  const ctx = createToolContext({ runId: setup.runId, agent: 'paused-attempt' });
  const warnings: string[] = [];
  let outcome: string | undefined;
  const wrapped = wrapToolsForRun({ [setup.toolName]: observed }, ctx, store, undefined, {
    leaseMs: setup.leaseMs,
    owner: 'attempt-B',
    onReport: (report) => (outcome = report.outcome),
    logger: { warn: (message: string) => void warnings.push(message) },
  });
  const execute = wrapped[setup.toolName]!.execute as (input: unknown, options: object) => Promise<unknown>;
  try {
    const result = await execute(setup.input, { toolCallId: 'call-B', messages: [], context: ctx });
    return {
      ok: true,
      result,
      ...(outcome ? { outcome } : {}),
      ...(fence ? { fence } : {}),
      writes: built.writes,
      warnings,
    };
  } catch (error) {
    const e = error as Error;
    return {
      ok: false,
      error: { name: e.name, message: e.message },
      ...(fence ? { fence } : {}),
      writes: built.writes,
      warnings,
    };
  } finally {
    await built.close();
    await store.close();
  }
}

/**
 * SIGSTOPs the child, but not while it holds the SQLite write lock: its lease keeper may be inside
 * a renewal at that instant, and a process stopped there blocks every store write of B (a
 * different failure, not the one under test). Probed with `BEGIN IMMEDIATE` on its own connection.
 */
async function stopOutsideStoreWrite(child: ChildProcess, storePath: string): Promise<void> {
  const probe = new DatabaseSync(storePath);
  try {
    for (let tries = 0; ; tries++) {
      signal(child, 'SIGSTOP');
      try {
        probe.exec('BEGIN IMMEDIATE');
        probe.exec('ROLLBACK');
        return;
      } catch (error) {
        if (tries > 100 || !/locked|busy/i.test(String(error))) throw error;
      }
      signal(child, 'SIGCONT');
      await sleep(3);
    }
  } finally {
    probe.close();
  }
}

function signal(child: ChildProcess, name: 'SIGSTOP' | 'SIGCONT'): void {
  if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, name);
}

/**
 * A directory with a `git` that holds `git push` at the pause files (`at-write`, then waits for
 * `go`) and runs every command with the real git.
 */
async function gitPushHolder(pauseDir: string): Promise<string> {
  const realGit = await whichGit();
  const dir = join(pauseDir, 'bin');
  await mkdir(dir);
  const script = [
    '#!/bin/sh',
    'if [ "$1" = push ]; then',
    `  echo held >> '${pauseDir}/push.log'`,
    `  echo $$ > '${pauseDir}/at-write'`,
    `  while [ ! -e '${pauseDir}/go' ]; do sleep 0.01; done`,
    `  echo released >> '${pauseDir}/push.log'`,
    'fi',
    `exec '${realGit}' "$@"`,
    '',
  ].join('\n');
  await writeFile(join(dir, 'git'), script);
  await chmod(join(dir, 'git'), 0o755);
  return dir;
}

async function whichGit(): Promise<string> {
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    const candidate = join(dir, 'git');
    if (dir !== '' && existsSync(candidate)) return candidate;
  }
  throw new Error('git is not on PATH');
}
