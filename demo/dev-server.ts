import { mkdirSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { findTemporalBinary } from '@chamvi/temporal/testing';
import { startChild, type Child } from './child-processes.js';
import { temporalReachable } from '../cli/temporal-connection.js';
import { UsageError } from '../cli/usage-error.js';

/** A Temporal server the demo uses: one it started, or one TEMPORAL_ADDRESS points at. */
export interface DevServer {
  readonly address: string;
  /** Where the web UI is, when known. */
  readonly uiUrl: string | undefined;
  /** True when the demo started the server (and stops it). */
  readonly started: boolean;
  stop(): Promise<void>;
}

/** True when nothing listens on `port` (on all interfaces). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** A port the OS says is free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `temporal server start-dev`, persisted in `<stateDir>/temporal.db`, on 7233/8233 when
 * both are free (other free ports otherwise); its log goes to `<stateDir>/temporal.log`. Resolves
 * once the frontend answers. `onWait` is called about once a second while it starts.
 */
export async function startDevServer(stateDir: string, onWait: (seconds: number) => void): Promise<DevServer> {
  const binary = findTemporalBinary('cli');
  if (binary === undefined) {
    throw new UsageError(
      'the Temporal CLI is not installed: run bash scripts/dev.sh install (or set TEMPORAL_CLI_PATH), or point TEMPORAL_ADDRESS at a server',
    );
  }
  mkdirSync(stateDir, { recursive: true });
  const defaults = (await portFree(7233)) && (await portFree(8233));
  const port = defaults ? 7233 : await freePort();
  const uiPort = defaults ? 8233 : await freePort();
  const log = openSync(join(stateDir, 'temporal.log'), 'a');
  const args = ['server', 'start-dev', '--db-filename', join(stateDir, 'temporal.db')];
  args.push('--ip', '127.0.0.1', '--port', String(port), '--ui-port', String(uiPort), '--log-level', 'warn');
  const child: Child = startChild(binary, args, { stdio: ['ignore', log, log] });
  const address = `127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.process.exitCode !== null || child.process.signalCode !== null) {
      throw new UsageError(`the Temporal dev server exited at start; see ${join(stateDir, 'temporal.log')}`);
    }
    if (await temporalReachable(address, 1_000)) break;
    const seconds = Math.round((Date.now() - started) / 1000);
    if (seconds > 60) {
      await child.stop();
      throw new UsageError(`the Temporal dev server did not answer within 60 s; see ${join(stateDir, 'temporal.log')}`);
    }
    onWait(seconds);
    await new Promise((r) => setTimeout(r, 500));
  }
  return { address, uiUrl: `http://localhost:${uiPort}`, started: true, stop: () => child.stop() };
}

/** The server TEMPORAL_ADDRESS names, checked to answer. */
export async function externalServer(address: string): Promise<DevServer> {
  if (!(await temporalReachable(address, 5_000))) {
    throw new UsageError(
      `cannot reach the Temporal server at ${address} (TEMPORAL_ADDRESS); start it, or unset TEMPORAL_ADDRESS to let the demo start one`,
    );
  }
  return { address, uiUrl: undefined, started: false, stop: async () => undefined };
}
