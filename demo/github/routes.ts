import type { IncomingMessage } from 'node:http';
import type { GitHubOperation } from './faults.js';
import { HttpError, readJson } from './http-io.js';
import type { IssueTracker } from './issue-tracker.js';
import { paginate } from './pagination.js';

/** What a route answers. */
export interface RouteAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

/** A matched route: its operation name (for faults) and the handler that applies it. */
export interface MatchedRoute {
  readonly op: GitHubOperation;
  readonly handle: () => Promise<RouteAnswer>;
}

const ISSUES = /^\/repos\/([^/]+)\/([^/]+)\/issues$/;
const ISSUE = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)$/;
const COMMENTS = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/;
const LABELS = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/labels$/;
const LABEL = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/labels\/([^/]+)$/;
const COMMENT = /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/;

/**
 * Matches a request to one of the GitHub REST routes the local server speaks, or `undefined`:
 *
 * - `POST /repos/{owner}/{repo}/issues` (`{ title, body? }`) -> 201 issue
 * - `GET  /repos/{owner}/{repo}/issues` -> issues, newest first, paginated
 * - `GET  /repos/{owner}/{repo}/issues/{n}` -> issue
 * - `GET  /repos/{owner}/{repo}/issues/{n}/comments` -> comments, oldest first, paginated
 * - `POST /repos/{owner}/{repo}/issues/{n}/comments` (`{ body }`) -> 201 comment
 * - `POST /repos/{owner}/{repo}/issues/{n}/labels` (`{ labels: [...] }` or `[...]`) -> 200 all labels
 * - `GET  /repos/{owner}/{repo}/issues/{n}/labels` -> labels, paginated
 * - `DELETE /repos/{owner}/{repo}/issues/comments/{id}` -> 204 (404 when there is no such comment)
 * - `DELETE /repos/{owner}/{repo}/issues/{n}/labels/{name}` -> 200 the labels left (404 when the label is not on it)
 */
export function matchRoute(
  req: IncomingMessage,
  url: URL,
  tracker: IssueTracker,
  login: string,
): MatchedRoute | undefined {
  const path = url.pathname.replace(/\/+$/, '');
  const method = req.method ?? 'GET';
  let m: RegExpExecArray | null;
  if ((m = ISSUES.exec(path))) {
    const [owner, repo] = names(m);
    if (method === 'GET')
      return { op: 'listIssues', handle: async () => list(req, url, tracker.listIssues(owner, repo)) };
    if (method === 'POST')
      return {
        op: 'createIssue',
        handle: async () => {
          const body = object(await readJson(req));
          const title = body.title;
          if (typeof title !== 'string' || title === '')
            throw new HttpError(422, 'Validation Failed: title is required');
          const text = typeof body.body === 'string' ? body.body : null;
          return { status: 201, body: tracker.createIssue(owner, repo, { title, body: text, login }) };
        },
      };
  }
  if ((m = ISSUE.exec(path)) && method === 'GET') {
    const [owner, repo, number] = issueRef(m);
    return {
      op: 'getIssue',
      handle: async () => ({ status: 200, body: found(tracker.getIssue(owner, repo, number)) }),
    };
  }
  if ((m = COMMENTS.exec(path))) {
    const [owner, repo, number] = issueRef(m);
    if (method === 'GET')
      return {
        op: 'listComments',
        handle: async () => list(req, url, found(tracker.listComments(owner, repo, number))),
      };
    if (method === 'POST')
      return {
        op: 'createComment',
        handle: async () => {
          const text = object(await readJson(req)).body;
          if (typeof text !== 'string' || text === '') throw new HttpError(422, 'Validation Failed: body is required');
          return { status: 201, body: found(tracker.addComment(owner, repo, number, text, login)) };
        },
      };
  }
  if ((m = LABELS.exec(path))) {
    const [owner, repo, number] = issueRef(m);
    if (method === 'GET')
      return { op: 'listLabels', handle: async () => list(req, url, found(tracker.listLabels(owner, repo, number))) };
    if (method === 'POST')
      return {
        op: 'addLabels',
        handle: async () => {
          const raw = await readJson(req);
          const labels = Array.isArray(raw) ? raw : object(raw).labels;
          if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string' || l === ''))
            throw new HttpError(422, 'Validation Failed: labels must be a list of names');
          return { status: 200, body: found(tracker.addLabels(owner, repo, number, labels as string[])) };
        },
      };
  }
  if ((m = COMMENT.exec(path)) && method === 'DELETE') {
    const [owner, repo] = names(m);
    const id = Number(m[3]);
    return {
      op: 'deleteComment',
      handle: async () => {
        if (!tracker.deleteComment(owner, repo, id)) throw new HttpError(404, 'Not Found');
        return { status: 204, body: undefined };
      },
    };
  }
  if ((m = LABEL.exec(path)) && method === 'DELETE') {
    const [owner, repo, number] = issueRef(m);
    const name = decodeURIComponent(m[4] ?? '');
    return {
      op: 'removeLabel',
      handle: async () => ({ status: 200, body: found(tracker.removeLabel(owner, repo, number, name)) }),
    };
  }
  return undefined;
}

function list<T>(req: IncomingMessage, url: URL, all: readonly T[]): RouteAnswer {
  const page = paginate(req, url, all);
  return { status: 200, body: page.items, ...(page.link ? { headers: { link: page.link } } : {}) };
}

function names(m: RegExpExecArray): [string, string] {
  return [decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? '')];
}

function issueRef(m: RegExpExecArray): [string, string, number] {
  const [owner, repo] = names(m);
  return [owner, repo, Number(m[3])];
}

function found<T>(value: T | undefined): T {
  if (value === undefined) throw new HttpError(404, 'Not Found');
  return value;
}

function object(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HttpError(400, 'Problems parsing JSON: expected an object');
  return value as Record<string, unknown>;
}
