/** The tracker's issues with their comment counts (the local GitHub-like server the agent posts to). */
export async function GET(): Promise<Response> {
  const answer = await fetch(`${process.env.CHAT_GITHUB_URL}/repos/${process.env.CHAT_REPO}/issues`, {
    headers: { authorization: 'token bot-token' },
    cache: 'no-store',
  });
  if (!answer.ok) return Response.json({ error: `the tracker answered ${answer.status}` }, { status: 502 });
  const issues = (await answer.json()) as Array<{ number: number; title: string; comments: number }>;
  return Response.json(issues.map(({ number, title, comments }) => ({ number, title, comments })));
}
