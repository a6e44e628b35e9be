// The comment remote of bench/history.ts: the local GitHub server, reached with plain fetch (the
// same client code on every side, so the remote costs every side the same).
import { LocalGitHubServer } from '../demo/github/index.js';

export const OWNER = 'acme';
export const REPO = 'widgets';
export const BOT = 'chamvi-bot';
const TOKEN = 'bot-token';

export interface CommentInput {
  readonly issue: number;
  readonly body: string;
}

export async function startRemote(): Promise<LocalGitHubServer> {
  return new LocalGitHubServer({ tokens: { [TOKEN]: BOT } }).start();
}

export function openIssue(remote: LocalGitHubServer): number {
  return remote.tracker.createIssue(OWNER, REPO, { title: 'bench', login: 'alice' }).number;
}

const headers = { authorization: `token ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json' };

export async function postComment(url: string, { issue, body }: CommentInput): Promise<{ id: number }> {
  const response = await fetch(`${url}/repos/${OWNER}/${REPO}/issues/${issue}/comments`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ body }),
  });
  if (response.status !== 201) throw new Error(`comment on #${issue}: HTTP ${response.status}`);
  const { id } = (await response.json()) as { id: number };
  return { id };
}

/** Every comment of an issue, paging through all of them (what a marker lookup must read). */
export async function listComments(
  url: string,
  issue: number,
): Promise<Array<{ id: number; body: string; login: string }>> {
  const all: Array<{ id: number; body: string; login: string }> = [];
  for (let page = 1; ; page++) {
    const response = await fetch(`${url}/repos/${OWNER}/${REPO}/issues/${issue}/comments?per_page=100&page=${page}`, {
      headers,
    });
    if (response.status !== 200) throw new Error(`comments of #${issue}: HTTP ${response.status}`);
    const comments = (await response.json()) as Array<{ id: number; body: string; user: { login: string } }>;
    all.push(...comments.map((c) => ({ id: c.id, body: c.body, login: c.user.login })));
    if (comments.length < 100) return all;
  }
}

/** Activities of the anchor and floor workflows: the comment, and the floor's canned model step. */
export function remoteActivities(url: string) {
  return {
    postComment: (input: CommentInput) => postComment(url, input),
  };
}
