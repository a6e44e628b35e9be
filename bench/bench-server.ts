// The Temporal dev server every benchmark runs its sides on: one server on free ports, started
// from the CLI the test setup installs, stopped by the caller.
import { Connection } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { findTemporalBinary } from '../testing/temporal-binaries.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface DevServer {
  readonly address: string;
  stop(): Promise<void>;
}

export async function startDevServer(): Promise<DevServer> {
  const binary = findTemporalBinary('cli');
  if (binary === undefined)
    throw new Error('No temporal CLI found: set TEMPORAL_CLI_PATH or run scripts/dev.sh install.');
  const [port, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const child: ChildProcess = spawn(
    binary,
    [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--http-port',
      String(httpPort),
      '--metrics-port',
      String(metricsPort),
      '--log-level',
      'error',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const address = `127.0.0.1:${port}`;
  const stop = async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return { address, stop };
    } catch (error) {
      if (Date.now() > deadline || child.exitCode !== null) {
        await stop();
        throw error;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
