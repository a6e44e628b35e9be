import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** A child process the CLI started, with how it ended. */
export interface Child {
  readonly process: ChildProcess;
  /** Resolves with the signal or exit code the process ended with. */
  readonly exited: Promise<NodeJS.Signals | number | null>;
  /** Asks the process to stop (SIGTERM), kills it (SIGKILL) after `graceMs`, and waits for it. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<Child>();

/** Spawns a child process that is stopped by {@link stopAllChildren} (on exit, Ctrl-C, errors). */
export function startChild(command: string, args: string[], options: SpawnOptions): Child {
  const child = spawn(command, args, options);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? code));
    child.once('error', () => resolve(null));
  });
  const handle: Child = {
    process: child,
    exited,
    async stop(graceMs = 5_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      running.delete(handle);
    },
  };
  running.add(handle);
  void exited.then(() => running.delete(handle));
  return handle;
}

/** Stops every child still running, most recent first. */
export async function stopAllChildren(): Promise<void> {
  const children = [...running].reverse();
  for (const child of children) await child.stop();
}

/**
 * Stops the children on Ctrl-C (SIGINT) and SIGTERM, then exits with 130/143; and kills them
 * synchronously if the process exits any other way.
 */
export function stopChildrenOnExit(onSignal?: () => void): void {
  const handler = (signal: NodeJS.Signals): void => {
    onSignal?.();
    process.stderr.write(`\nchamvi: ${signal}: stopping child processes\n`);
    void stopAllChildren().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  process.once('exit', () => {
    for (const child of running) child.process.kill('SIGKILL');
  });
}

/** Resolves when `child` prints `line` on stdout; rejects (with its output) if it exits first. */
export function waitForLine(child: Child, line: string, timeoutMs: number): Promise<void> {
  let output = '';
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "${line}" within ${timeoutMs / 1000} s:\n${output}`)),
      timeoutMs,
    );
    child.process.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.split('\n').includes(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.process.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void child.exited.then((how) => {
      clearTimeout(timer);
      reject(
        new Error(
          `process ended (${String(how)}) before "${line}":\n${output.trim().split('\n').slice(-8).join('\n')}`,
        ),
      );
    });
  });
}
