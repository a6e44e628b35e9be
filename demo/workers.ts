import { createWriteStream, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startChild, waitForLine, type Child } from './child-processes.js';

/** Where the demo worker connects and what it records to. */
export interface DemoWorkerConfig {
  readonly address: string;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly store: string;
  readonly githubUrl: string;
  /** Folder for the workers' logs (worker-<n>.log). */
  readonly logDir: string;
}

/** A module of the package, from this one (`.js` when compiled, `.ts` when run from source with tsx). */
function moduleFile(path: string): string {
  const js = fileURLToPath(new URL(`${path}.js`, import.meta.url));
  return existsSync(js) ? js : fileURLToPath(new URL(`${path}.ts`, import.meta.url));
}

/**
 * Starts `chamvi worker --agents <demo/agents>` in a new process (the same Node and loader flags as
 * this one), and resolves once it polls. `crash` makes it SIGKILL itself right after the first
 * comment is posted. `onWait` is called about every second while it starts (bundling workflows).
 */
export async function startDemoWorker(
  config: DemoWorkerConfig,
  n: number,
  crash: boolean,
  onWait: (seconds: number) => void,
): Promise<Child> {
  // The CLI's worker command in a child process, as an operator runs it.
  const args = [...process.execArgv, moduleFile('../cli/main'), 'worker', '--agents', moduleFile('./agents')];
  args.push(
    '--store',
    config.store,
    '--task-queue',
    config.taskQueue,
    '--address',
    config.address,
    '--namespace',
    config.namespace,
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CHAMVI_GITHUB_URL: config.githubUrl,
    CHAMVI_GITHUB_REPO: 'acme/widgets',
  };
  delete env['CHAMVI_DEMO_CRASH'];
  if (crash) env['CHAMVI_DEMO_CRASH'] = 'after-first-comment';
  const child = startChild(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(`${config.logDir}/worker-${n}.log`);
  child.process.stdout?.pipe(log, { end: false });
  child.process.stderr?.pipe(log, { end: false });
  void child.exited.then(() => log.end());
  const started = Date.now();
  const ticker = setInterval(() => onWait(Math.round((Date.now() - started) / 1000)), 1_000);
  try {
    await waitForLine(child, 'ready', 120_000);
  } finally {
    clearInterval(ticker);
  }
  return child;
}

/** The issue number a crashing worker reported (`crash: comment posted on issue #N; ...`), once it does. */
export function crashReport(child: Child): Promise<string> {
  return new Promise((resolve) => {
    let output = '';
    child.process.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.startsWith('crash: '));
      if (line !== undefined) resolve(line.slice('crash: '.length));
    });
  });
}
