// Debian's Chromium for the browser tests, driven by playwright-core (which downloads no browser).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * Launches headless Chromium; installs Debian's `chromium` package first when it is missing (as
 * .ci/run does), so the test runs on a fresh machine. `--no-sandbox`: the tests run as root.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    const apt = (...args: string[]) =>
      spawnSync('apt-get', args, { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (apt('install', '-y', 'chromium').status !== 0) {
      apt('update');
      apt('install', '-y', 'chromium');
    }
  }
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
}
