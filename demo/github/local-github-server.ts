import type { IncomingMessage, ServerResponse } from 'node:http';
import { LocalHttpServer } from '../local-http-server.js';
import { authenticate, type TokenLogins } from './auth.js';
import { FaultPlan, type GitHubOperation } from './faults.js';
import { dropResponse, HttpError, sendJson } from './http-io.js';
import { IssueTracker } from './issue-tracker.js';
import { matchRoute } from './routes.js';

/** Options of {@link LocalGitHubServer}. */
export interface LocalGitHubServerOptions {
  /** API tokens and the logins they authenticate as. Default `{ 'bot-token': 'chamvi-bot' }`. */
  readonly tokens?: TokenLogins;
  /** Port to listen on; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Host to bind. Default `127.0.0.1`. */
  readonly host?: string;
}

/**
 * A local issue tracker speaking the subset of GitHub's REST API that effect tools need, so the
 * real Octokit client works against it with `new Octokit({ baseUrl: server.url, auth: token })`.
 * GitHub itself is unreachable from CI machines; this server makes the tests real HTTP.
 *
 * Routes (see `routes.ts`): create/get/list issues; list comments (GitHub pagination: `per_page`
 * up to 100, `page`, and a `Link` header with `rel="next"`/`rel="last"`, so `octokit.paginate`
 * walks every page); create a comment (`user.login` is the token's login); add labels (set
 * semantics) and list labels. Repositories exist on first use. Every request needs
 * `Authorization: token X` or `Bearer X` with a known token; otherwise 401 `Bad credentials`.
 *
 * Tests count effects on the remote side through {@link LocalGitHubServer.counters} and
 * {@link LocalGitHubServer.tracker}, and inject faults:
 * {@link LocalGitHubServer.failNextCommentResponse} applies the next comment and then destroys the
 * socket before answering (a real "effect applied, response lost" crash).
 *
 * ```ts
 * const github = await new LocalGitHubServer({ tokens: { t1: 'bot' } }).start();
 * const octokit = new Octokit({ baseUrl: github.url, auth: 't1' });
 * ...
 * await github.stop();
 * ```
 */
export class LocalGitHubServer {
  /** The state behind the API; tests may seed it directly (no HTTP). */
  readonly tracker = new IssueTracker();
  /** Planned faults; prefer the shortcut methods below. */
  readonly faults = new FaultPlan();
  private readonly tokens: TokenLogins;
  private readonly http: LocalHttpServer;
  private requestCount = 0;

  constructor(options: LocalGitHubServerOptions = {}) {
    this.tokens = options.tokens ?? { 'bot-token': 'chamvi-bot' };
    this.http = new LocalHttpServer(
      'LocalGitHubServer',
      (req, res) => this.handle(req, res),
      options.host ?? '127.0.0.1',
      options.port ?? 0,
    );
  }

  /** Starts listening; resolves with this server once the port is bound. */
  async start(): Promise<this> {
    await this.http.start();
    return this;
  }

  /** Stops listening and closes open connections. Safe to call twice. */
  async stop(): Promise<void> {
    await this.http.stop();
  }

  /** Base URL for Octokit's `baseUrl`, e.g. `http://127.0.0.1:41234`. Throws before `start()`. */
  get url(): string {
    return this.http.url;
  }

  /** Requests answered or dropped so far (any route, any status). */
  get requests(): number {
    return this.requestCount;
  }

  /**
   * Effect counters of one issue: `commentsCreated` (every comment ever created),
   * `labelsAdded` (label names that were new when added) and `labelRequests`.
   */
  counters(owner: string, repo: string, issue: number) {
    return this.tracker.counters(owner, repo, issue);
  }

  /** The next `times` comment creations are applied, then the socket is destroyed before the answer. */
  failNextCommentResponse(times = 1): void {
    this.dropNextResponse('createComment', times);
  }

  /** The next `times` requests of `op` are applied, then the socket is destroyed before the answer. */
  dropNextResponse(op: GitHubOperation, times = 1): void {
    this.faults.plan(op, { kind: 'drop-response' }, times);
  }

  /** The next `times` requests of `op` are answered with `status` and NOT applied. */
  failNextRequest(op: GitHubOperation, status = 502, times = 1): void {
    this.faults.plan(op, { kind: 'fail', status }, times);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requestCount += 1;
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      const login = authenticate(req, this.tokens);
      const route = matchRoute(req, url, this.tracker, login);
      if (route === undefined) throw new HttpError(404, 'Not Found');
      const fault = this.faults.take(route.op);
      if (fault?.kind === 'fail') throw new HttpError(fault.status, `Injected failure of ${route.op}`);
      const answer = await route.handle();
      if (fault?.kind === 'drop-response') return dropResponse(req, res);
      sendJson(res, answer.status, answer.body, answer.headers);
    } catch (error) {
      if (error instanceof HttpError)
        sendJson(res, error.status, {
          message: error.message,
          documentation_url: 'https://docs.github.com/rest',
        });
      else sendJson(res, 500, { message: error instanceof Error ? error.message : String(error) });
    }
  }
}
