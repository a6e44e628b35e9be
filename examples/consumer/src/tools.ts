import { defineEffectTool, effectMarker, findEffectMarkers } from '@chamvi/temporal';
import { z } from 'zod';

// Yours to write: listComments and postComment call your issue tracker (GitHub's REST API, say).
// These stand-ins keep comments in the worker's memory, so the tutorial runs as it is.
type IssueComment = { id: number; issue: number; body: string; user: { login: string } };
const tracker: IssueComment[] = [];

async function listComments(issue: number): Promise<IssueComment[]> {
  return tracker.filter((c) => c.issue === issue); // yours pages through ALL of them
}

async function postComment(issue: number, body: string, signal?: AbortSignal): Promise<{ id: number }> {
  signal?.throwIfAborted(); // yours: fetch(url, { method: 'POST', body, signal }), so a cancelled attempt stops
  const posted = { id: tracker.length + 1, issue, body, user: { login: 'my-bot' } };
  tracker.push(posted);
  return { id: posted.id };
}

export const comment = defineEffectTool({
  description: 'Posts a comment on the issue.',
  inputSchema: z.object({ issue: z.number(), body: z.string() }),
  // one comment per run and issue, whatever the body says
  effectKey: ({ issue }, ctx) => `${ctx.run.runId}:comment:${issue}`,
  // a comment an earlier, crashed attempt already posted (page through ALL comments, check the author)
  alreadyApplied: async (key, { issue }) => {
    const found = (await listComments(issue)).find(
      (c) => c.user.login === 'my-bot' && findEffectMarkers(c.body).includes(key),
    );
    return found === undefined ? undefined : { id: found.id };
  },
  execute: async ({ issue, body }, { context, abortSignal }) =>
    postComment(issue, `${body}\n${effectMarker(`${context.run.runId}:comment:${issue}`)}`, abortSignal),
});
