import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { externalServer, startDevServer, type DevServer } from '../../demo/dev-server.js';
import { connectClient } from '../../cli/temporal-connection.js';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { chamviWorkflowsPath } from '../../worker/index.js';
import { createRunStreamStore, runUIMessageStream } from '../../client/index.js';
import { CHAT_REPO } from './chat-agent.js';
import { ChatServer } from './chat-server.js';
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
  /** Called while the dev server or the workflow bundle is being prepared. */
  readonly onProgress?: (line: string) => void;
}

/** The running example: its parts, for the launcher to print and for tests to drive. */
export interface ChatExample {
  readonly url: string;
  readonly temporal: DevServer;
  readonly github: LocalGitHubServer;
  readonly worker: WorkerSupervisor;
  readonly client: Client;
  readonly store: string;
  /** Comments on the tracker's issue `n`. */
  comments(issue: number): number;
  stop(): Promise<void>;
}

const QUIET = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/**
 * Starts the chat example on the embedded defaults: a Temporal dev server (or `TEMPORAL_ADDRESS`),
 * the SQLite store `<stateDir>/chat.db`, a local GitHub-like tracker with one open issue, a worker
 * process kept alive by a {@link WorkerSupervisor}, and the chat page's server.
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
    const { code } = await bundleWorkflowCode({ workflowsPath: chamviWorkflowsPath(), logger: QUIET });
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
    // The workers stream their model steps into the store's file (a table of its own); the page's
    // server follows it there (SQLite: readers poll every 50 ms).
    const stream = createRunStreamStore(store);
    stops.push(() => stream.close());
    const comments = (issue: number) =>
      github.tracker.listComments(CHAT_REPO.owner, CHAT_REPO.repo, issue)?.length ?? 0;
    const server = await new ChatServer({
      client,
      taskQueue,
      approvalSecret,
      // Effects and approvals come from GET /api/runs/<id> (the page polls it for the run's status
      // anyway), so the stream leaves out its data-chamvi-* parts, which would ask the same two
      // queries again for every open page.
      openStream: (workflowId) => runUIMessageStream({ client, workflowId, stream, pollMs: 500, progressParts: false }),
      issues: () =>
        github.tracker
          .listIssues(CHAT_REPO.owner, CHAT_REPO.repo)
          .map((issue) => ({ number: issue.number, title: issue.title, comments: comments(issue.number) })),
      worker,
      ...(options.port !== undefined ? { port: options.port } : {}),
    }).start();
    stops.push(() => server.stop());
    return { url: server.url, temporal, github, worker, client, store, comments, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
