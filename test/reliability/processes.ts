// Worker processes for the kill tests and the soak (test/fixtures/reliability-worker.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

/** A running worker process. */
export interface WorkerProcess {
  readonly process: ChildProcess;
  /** The signal (or exit code) it ended with. */
  readonly exited: Promise<NodeJS.Signals | number | null>;
  kill(signal?: NodeJS.Signals): Promise<NodeJS.Signals | number | null>;
}

/** Bundles the test workflows once and writes them to `dir`, for worker processes to load without bundling. */
export async function writeBundle(dir: string): Promise<string> {
  const path = join(dir, 'workflow-bundle.js');
  writeFileSync(path, (await bundleTestWorkflows()).code);
  return path;
}

/** Starts a worker process and resolves once it polls. */
export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const script = fileURLToPath(new URL('../fixtures/reliability-worker.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready\n')) resolve();
    });
    child.stderr.on('data', (chunk: Buffer) => (output = `${output}${chunk.toString()}`.slice(-20_000)));
    void exited.then((how) =>
      reject(new Error(`worker process ended (${String(how)}) before it was ready:\n${output}`)),
    );
  });
  return {
    process: child,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
