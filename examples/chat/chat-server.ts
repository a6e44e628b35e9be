import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { pipeUIMessageStreamToResponse, type UIMessageChunk } from 'ai';
import { HttpError, readJson, sendJson } from '../../demo/github/http-io.js';
import { LocalHttpServer } from '../../demo/local-http-server.js';
import { decideApproval, startAgentRun } from '../../client/index.js';
import { CHAT_AGENT } from './chat-agent.js';
import { readRunState, type RunState } from './run-state.js';
import { checkSameOrigin, loopbackHosts } from './same-origin-guard.js';

/** What the chat server needs: where runs go, how to stream one, and what the page shows beside it. */
export interface ChatServerOptions {
  readonly client: Client;
  readonly taskQueue: string;
  /** The workers' approval secret: the server signs the page's decisions with it. */
  readonly approvalSecret: string;
  /** A run's AI SDK UI message stream, from its start (the page renders it from scratch). */
  readonly openStream: (workflowId: string) => ReadableStream<UIMessageChunk>;
  /** The tracker's issues with their comment counts, shown beside the chat. */
  readonly issues: () => Array<{ number: number; title: string; comments: number }>;
  /** The worker process the page's "Kill worker" button SIGKILLs (the launcher restarts it). */
  readonly worker?: {
    pid(): number | undefined;
    restarts(): number;
    kill(): void;
    crashAfterNextComment(): void;
    crashArmed(): boolean;
  };
  readonly port?: number;
}

const PUBLIC = new URL('./public/', import.meta.url);
const STATIC: Record<string, string> = {
  '/': 'index.html',
  '/chat.js': 'chat.js',
  '/chat.css': 'chat.css',
};
const TYPES: Record<string, string> = { html: 'text/html', js: 'text/javascript', css: 'text/css' };

/** A JSON object body, or a 400. */
async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  const value = await readJson(req);
  if (typeof value !== 'object' || value === null) throw new HttpError(400, 'expected a JSON object');
  return value as Record<string, unknown>;
}

/**
 * The chat example's HTTP server (plain `node:http`): the page and its script; `POST /api/runs`
 * `{ message }` starts an agent run on Temporal; `GET /api/runs/<id>/stream` is the run's UI
 * message stream as server-sent events (as `createUIMessageStreamResponse` sends it);
 * `GET /api/runs/<id>` its state (effects, pending approvals); `POST /api/runs/<id>/approvals/<call>`
 * `{ approved, reason? }` decides a pending call with a signed token; `GET /api/info` the tracker
 * and worker; `POST /api/worker/kill` SIGKILLs the worker, `POST /api/worker/crash-after-comment`
 * makes it die right after it posts the next comment.
 *
 * It answers its own page only ({@link checkSameOrigin}): `Host` must be `127.0.0.1:<port>` or
 * `localhost:<port>`, a cross-site request is refused with 403, and a POST must be a same-origin
 * `application/json` request (else 403 or 415), since it starts runs, signs approvals with the
 * workers' secret and kills the worker.
 */
export class ChatServer {
  private readonly http: LocalHttpServer;
  private readonly lastSeen = new Map<string, RunState>();
  private hosts: readonly string[] = [];

  constructor(private readonly options: ChatServerOptions) {
    this.http = new LocalHttpServer('chat server', (req, res) => this.handle(req, res), '127.0.0.1', options.port ?? 0);
  }

  async start(): Promise<this> {
    await this.http.start();
    this.hosts = loopbackHosts(Number(new URL(this.http.url).port));
    return this;
  }

  stop(): Promise<void> {
    return this.http.stop();
  }

  get url(): string {
    return this.http.url;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      checkSameOrigin(req, this.hosts);
      await this.route(req, res);
    } catch (error) {
      if (res.headersSent) return void res.end();
      const status = error instanceof HttpError ? error.status : 500;
      const cause = (error as { cause?: unknown }).cause;
      const message = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
      sendJson(res, status, { error: message });
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    const file = STATIC[pathname];
    if (req.method === 'GET' && file !== undefined) {
      const text = await readFile(new URL(file, PUBLIC));
      res.writeHead(200, { 'content-type': `${TYPES[file.split('.').pop() ?? ''] ?? 'text/plain'}; charset=utf-8` });
      return void res.end(text);
    }
    const { client } = this.options;
    if (req.method === 'GET' && pathname === '/api/info') {
      const worker = this.options.worker;
      return sendJson(res, 200, {
        issues: this.options.issues(),
        worker:
          worker === undefined
            ? null
            : { pid: worker.pid() ?? null, restarts: worker.restarts(), crashArmed: worker.crashArmed() },
      });
    }
    if (req.method === 'POST' && (pathname === '/api/worker/kill' || pathname === '/api/worker/crash-after-comment')) {
      if (this.options.worker === undefined) throw new HttpError(404, 'no worker process');
      if (pathname.endsWith('/kill')) this.options.worker.kill();
      else this.options.worker.crashAfterNextComment();
      return sendJson(res, 200, { done: true });
    }
    if (req.method === 'POST' && pathname === '/api/runs') {
      const { message } = await body(req);
      if (typeof message !== 'string' || message.trim() === '') throw new HttpError(400, 'message is required');
      const workflowId = `chat-${randomUUID()}`;
      await startAgentRun(client, {
        agent: CHAT_AGENT,
        prompt: message,
        taskQueue: this.options.taskQueue,
        workflowId,
        // The page shows the message again after a reload: the run's memo keeps it.
        memo: { message },
        // A killed worker's model step is retried after 2 s without a heartbeat, not after 30 s.
        activityOptions: {
          modelStep: {
            heartbeatTimeout: '2 seconds',
            retry: { initialInterval: '200 ms', maximumInterval: '1 second' },
          },
          store: { startToCloseTimeout: '5 seconds' },
        },
      });
      return sendJson(res, 201, { workflowId });
    }
    const run = /^\/api\/runs\/([\w-]+)(\/stream|\/approvals\/([\w.:-]+))?$/.exec(pathname);
    if (run === null) throw new HttpError(404, `no route ${req.method ?? ''} ${pathname}`);
    const [, workflowId = '', sub, toolCallId] = run;
    if (req.method === 'GET' && sub === undefined) {
      return sendJson(res, 200, await readRunState(client, workflowId, this.lastSeen));
    }
    if (req.method === 'GET' && sub === '/stream') {
      // A page that closes or reloads disconnects; the AI SDK's writer then cancels the stream.
      return pipeUIMessageStreamToResponse({ response: res, stream: this.options.openStream(workflowId) });
    }
    if (req.method === 'POST' && toolCallId !== undefined) {
      const { approved, reason } = await body(req);
      if (typeof approved !== 'boolean') throw new HttpError(400, 'approved (true or false) is required');
      const record = await decideApproval(client, workflowId, {
        toolCallId,
        approved,
        secret: this.options.approvalSecret,
        approver: 'chat page',
        ...(typeof reason === 'string' && reason !== '' ? { reason } : {}),
      });
      return sendJson(res, 200, record);
    }
    throw new HttpError(404, `no route ${req.method ?? ''} ${pathname}`);
  }
}
