import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, type Child } from '../../../demo/child-processes.js';

/** The chat example's Next.js app (examples/chat), and the Next.js CLI that builds and serves it. */
const APP_DIR = fileURLToPath(new URL('..', import.meta.url));
const NEXT = fileURLToPath(new URL('../../../node_modules/next/dist/bin/next', import.meta.url));
const SOURCES = ['app', 'lib', 'proxy.ts', 'next.config.ts', 'tsconfig.json'];
const NEXT_ENV = { NEXT_TELEMETRY_DISABLED: '1' };

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The library's folders that dist/ is compiled from (tsconfig.build.json). */
const LIBRARY = ['src', 'common', 'workflows', 'activities', 'worker', 'client', 'testing'];

/**
 * Whether the library's build (dist/, what the app imports as `@chamvi/temporal/*`) is missing or
 * older than its sources (`npm run build` rewrites every file of it).
 */
export function libraryBuildStale(): boolean {
  const built = join(ROOT, 'dist', 'client', 'index.js');
  if (!existsSync(built)) return true;
  return Math.max(...LIBRARY.map((dir) => newestMtime(join(ROOT, dir)))) > statSync(built).mtimeMs;
}

/** Whether the app's production build is missing or older than its sources or the library's build. */
export function chatAppStale(): boolean {
  const built = join(APP_DIR, '.next', 'BUILD_ID');
  if (!existsSync(built)) return true;
  const library = join(ROOT, 'dist', 'client', 'index.js');
  const sources = Math.max(...SOURCES.map((s) => newestMtime(join(APP_DIR, s))), newestMtime(library));
  return sources > statSync(built).mtimeMs;
}

/**
 * `next build` of the app (Turbopack; the type check included), as a user's CI runs it. Throws
 * with the build's output when it fails. Returns its duration in ms.
 */
export function buildChatApp(): number {
  const t0 = Date.now();
  const build = spawnSync(process.execPath, [NEXT, 'build', APP_DIR], {
    env: { ...process.env, ...NEXT_ENV },
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (build.status !== 0) {
    throw new Error(
      `next build of ${APP_DIR} failed (${build.status ?? build.signal}):\n${build.stdout}${build.stderr}`,
    );
  }
  return Date.now() - t0;
}

/** What the app's server reads from its environment (see examples/chat/lib/chat.ts). */
export interface ChatAppEnv {
  readonly TEMPORAL_ADDRESS: string;
  readonly CHAMVI_STORE: string;
  readonly CHAMVI_APPROVAL_SECRET: string;
  readonly CHAT_TASK_QUEUE: string;
  readonly CHAT_AGENT: string;
  readonly CHAT_GITHUB_URL: string;
  /** The tracker repository, `owner/name`. */
  readonly CHAT_REPO: string;
}

/**
 * `next start` of the built app on 127.0.0.1:`port` (PORT is also what its same-origin guard
 * allows); resolves once it answers. Its output goes to `log`.
 */
export async function startChatApp(env: ChatAppEnv, port: number, log: string): Promise<Child> {
  const child = startChild(process.execPath, [NEXT, 'start', APP_DIR, '-H', '127.0.0.1', '-p', String(port)], {
    env: { ...process.env, ...NEXT_ENV, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = createWriteStream(log);
  child.process.stdout?.pipe(out);
  child.process.stderr?.pipe(out);
  let ended: string | undefined;
  void child.exited.then((how) => (ended = String(how)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (ended !== undefined) throw new Error(`next start ended (${ended}) before it answered; see ${log}`);
    const answered = await fetch(`http://127.0.0.1:${port}/api/tracker`).then(
      (r) => r.ok,
      () => false,
    );
    if (answered) return child;
    if (Date.now() > deadline) {
      await child.stop();
      throw new Error(`next start did not answer on port ${port} within 60 s; see ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
