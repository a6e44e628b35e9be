import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { externalServer, freePort, startDevServer, type DevServer } from '../../../demo/dev-server.js';
import { connectClient } from '../../../cli/temporal-connection.js';
import type { Child } from '../../../demo/child-processes.js';
import { LocalGitHubServer } from '../../../demo/github/index.js';
import { chamviWorkflowsPath } from '../../../worker/index.js';
import { CHAT_AGENT, CHAT_REPO } from './chat-agent.js';
import { buildChatApp, chatAppStale, startChatApp } from './chat-app.js';
import { WorkerSupervisor } from './worker-supervisor.js';

/** What {@link startChatExample} takes; every field has an embedded default. */
export interface ChatExampleOptions {
  /**
   * Folder of the SQLite store, the Temporal dev server's data and the logs. Default `.chamvi/chat`
   * (apart from `npm start`'s `.chamvi/temporal.db`, so both can run at once).
   */
  readonly stateDir?: string;
  /**
   * A Temporal server to use instead of starting a dev server; `null` always starts one. Default
   * `TEMPORAL_ADDRESS`, else a new dev server.
   */
  readonly temporalAddress?: string | null;
  /** The page's port. Default 0 (a free one). */
  readonly port?: number;
  /** Milliseconds per streamed word of the scripted model. Default 120. */
  readonly tokenMs?: number;
  /** `next build` the app first: `true` always, `false` never, `'stale'` (default) when the build is missing or older than the sources. */
  readonly build?: boolean | 'stale';
  /** Called while the dev server, the workflow bundle or the app's build is being prepared. */
  readonly onProgress?: (line: string) => void;
}

/** The running example: its parts, for the launcher to print and for tests to drive. */
export interface ChatExample {
  readonly url: string;
  readonly temporal: DevServer;
  readonly github: LocalGitHubServer;
  readonly worker: WorkerSupervisor;
  readonly app: Child;
  readonly client: Client;
  readonly store: string;
  /** How long `next build` took, in ms (undefined: the build was current). */
  readonly buildMs: number | undefined;
  /** Comments on the tracker's issue `n`. */
  comments(issue: number): number;
  stop(): Promise<void>;
}

const QUIET = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/**
 * Starts the chat example on the embedded defaults: a Temporal dev server (or `TEMPORAL_ADDRESS`),
 * the SQLite store `<stateDir>/chat.db`, a local GitHub-like tracker with one open issue, a worker
 * process kept alive by a {@link WorkerSupervisor}, and the Next.js app (`next start`, built first
 * when its build is stale).
 */
export async function startChatExample(options: ChatExampleOptions = {}): Promise<ChatExample> {
  const stateDir = options.stateDir ?? join('.chamvi', 'chat');
  const say = options.onProgress ?? (() => undefined);
  mkdirSync(stateDir, { recursive: true });
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => undefined);
  };
  try {
    const build = options.build ?? 'stale';
    let buildMs: number | undefined;
    if (build === true || (build === 'stale' && chatAppStale())) {
      say('App: next build');
      buildMs = buildChatApp();
    }
    const address = options.temporalAddress === undefined ? process.env['TEMPORAL_ADDRESS'] : options.temporalAddress;
    say(address ? `Temporal: ${address}` : 'Temporal: starting a dev server');
    const temporal = address ? await externalServer(address) : await startDevServer(stateDir, () => undefined);
    stops.push(() => temporal.stop());
    const github = await new LocalGitHubServer().start();
    stops.push(() => github.stop());
    github.tracker.createIssue(CHAT_REPO.owner, CHAT_REPO.repo, {
      title: 'Crash when saving a widget with an empty name',
      body: 'Steps: create a widget, clear the name, save.',
      login: 'alice',
    });
    say('Workers: bundling the workflows once');
    const { code } = await bundleWorkflowCode({
      workflowsPath: chamviWorkflowsPath(),
      preloadModules: [chamviWorkflowsPath()],
      logger: QUIET,
    });
    const workflowBundle = join(stateDir, 'chat-workflows.js');
    writeFileSync(workflowBundle, code);
    const store = `sqlite:${join(stateDir, 'chat.db')}`;
    const taskQueue = `chamvi-chat-${randomBytes(4).toString('hex')}`;
    const approvalSecret = randomBytes(32).toString('hex');
    const worker = new WorkerSupervisor({
      address: temporal.address,
      taskQueue,
      store,
      githubUrl: github.url,
      approvalSecret,
      markerSecret: 'chamvi-chat-example-secret',
      workflowBundle,
      logDir: stateDir,
      ...(options.tokenMs !== undefined ? { tokenMs: options.tokenMs } : {}),
    });
    stops.push(() => worker.stop());
    await worker.start();
    const client = await connectClient(temporal.address, process.env['TEMPORAL_NAMESPACE'] ?? 'default');
    stops.push(() => client.connection.close());
    const port = options.port || (await freePort());
    // The workers stream their model steps into the store's file (a table of its own); the app
    // follows it there (SQLite: readers poll every 50 ms) and reads the conversations from it.
    const app = await startChatApp(
      {
        TEMPORAL_ADDRESS: temporal.address,
        CHAMVI_STORE: store,
        CHAMVI_APPROVAL_SECRET: approvalSecret,
        CHAT_TASK_QUEUE: taskQueue,
        CHAT_AGENT,
        CHAT_GITHUB_URL: github.url,
        CHAT_REPO: `${CHAT_REPO.owner}/${CHAT_REPO.repo}`,
      },
      port,
      join(stateDir, 'app.log'),
    );
    stops.push(() => app.stop(5_000));
    const comments = (issue: number) =>
      github.tracker.listComments(CHAT_REPO.owner, CHAT_REPO.repo, issue)?.length ?? 0;
    return { url: `http://127.0.0.1:${port}`, temporal, github, worker, app, client, store, buildMs, comments, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
