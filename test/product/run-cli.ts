import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI's entry point, run from source with tsx (the same code as dist/cli/main.js). */
export const CLI_MAIN = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
/** The demo's entry point (`npm start`), likewise. */
export const DEMO_MAIN = fileURLToPath(new URL('../../demo/main.ts', import.meta.url));
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `chamvi <args>` (or `main`, the demo's entry point) to completion with `env` added
 * (CHAMVI_ and TEMPORAL_ settings cleared first).
 */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
  main = CLI_MAIN,
): Promise<CliResult> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(CHAMVI_|TEMPORAL_ADDRESS|TEMPORAL_NAMESPACE)/.test(k)),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', main, ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
