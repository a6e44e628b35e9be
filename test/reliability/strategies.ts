// The six reconciliation strategies of the reliability matrix, each as an agent with one effect tool
// against a real remote, plus how to count the remote effects of one call. Used in-process by the
// matrix tests and by the worker processes of the kill tests (test/fixtures/reliability-worker.ts).
import { Octokit } from '@octokit/rest';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { connect, type NatsConnection } from 'nats';
import { z } from 'zod';
import { defineAgent, defineEffectTool, effectMarker, findEffectMarkers } from '../../src/index.js';
import { runGit } from '../../src/strategies/index.js';
import type { AgentRegistration } from '../../activities/agent-registry.js';
import { createGitHubCommentTool } from '../../examples/github/comment-tool.js';
import { createGitPushTool } from '../../examples/git/push-tool.js';
import { createTicketTool } from '../../examples/http/ticket-tool.js';
import { createNatsNotifyTool } from '../../examples/nats/notify-tool.js';
import { scriptedModel } from '../../testing/scripted-model.js';

export const STRATEGIES = ['none', 'marker', 'signed-marker', 'git-trailer', 'idempotency-key', 'nats-msg-id'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export const OWNER = 'acme';
export const REPO = 'widgets';
export const BOT = 'chamvi-bot';
export const BOT_TOKEN = 'bot-token';
export const MARKER_SECRET = 'reliability-matrix-secret';

/** Where the remotes are (URLs and paths only, so worker processes can be told by env). */
export interface Remotes {
  readonly githubUrl: string;
  readonly ticketsUrl: string;
  readonly natsServers: string;
  readonly natsSubject: string;
  /** Bare repository the git tool pushes to. */
  readonly gitRemote: string;
  /** Scratch bare repository of this worker (one per worker). */
  readonly gitWorkDir: string;
}

/** The tool call a run makes: its prompt is this JSON, and the scripted model calls `tool` with `input`. */
export interface PlannedCall {
  readonly tool: string;
  readonly input: Record<string, unknown>;
}

/** A model that answers step 0 with the call in the prompt, and step 1 with "Done.". */
export function promptedModel() {
  return scriptedModel([
    ({ prompt }) => {
      const call = readCall(prompt);
      return { toolCalls: [{ toolName: call.tool, input: call.input }] };
    },
    { text: 'Done.' },
  ]);
}

function readCall(prompt: LanguageModelV4CallOptions['prompt']): PlannedCall {
  const user = prompt.find((m) => m.role === 'user');
  const part = Array.isArray(user?.content) ? user.content.find((c) => c.type === 'text') : undefined;
  return JSON.parse((part as { text: string } | undefined)?.text ?? '{}') as PlannedCall;
}

/** The effect tool of each strategy, against the remotes. */
export function strategyTools(remotes: Remotes, nats: () => Promise<NatsConnection>) {
  const octokit = new Octokit({ baseUrl: remotes.githubUrl, auth: BOT_TOKEN });
  const commentInput = z.object({ issue: z.number(), body: z.string() });
  const post = (issue: number, body: string) =>
    octokit.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: issue, body });
  return {
    // No strategy: nothing tells a retry that the comment exists.
    none: defineEffectTool({
      description: 'Posts a comment (no reconciliation).',
      inputSchema: commentInput,
      execute: async ({ issue, body }) => ({ id: (await post(issue, body)).data.id }),
    }),
    // Plain marker: the key in a hidden HTML comment, found again by paging through the comments.
    marker: defineEffectTool({
      description: 'Posts a comment with a marker.',
      inputSchema: commentInput,
      effectKey: ({ issue }, ctx) => `${ctx.run.runId}:marker:${issue}`,
      alreadyApplied: async (key, { issue }) => {
        const comments = await octokit.paginate(octokit.rest.issues.listComments, {
          owner: OWNER,
          repo: REPO,
          issue_number: issue,
          per_page: 100,
        });
        const found = comments.find((c) => c.user?.login === BOT && findEffectMarkers(c.body ?? '').includes(key));
        return found === undefined ? undefined : { id: found.id };
      },
      execute: async ({ issue, body }, { context }) => ({
        id: (await post(issue, `${body}\n${effectMarker(`${context.run.runId}:marker:${issue}`)}`)).data.id,
      }),
    }),
    'signed-marker': createGitHubCommentTool({
      octokit,
      owner: OWNER,
      repo: REPO,
      botLogin: BOT,
      markerSecret: MARKER_SECRET,
    }),
    'git-trailer': createGitPushTool({ workDir: remotes.gitWorkDir, remote: remotes.gitRemote, branch: 'main' }),
    'idempotency-key': createTicketTool({ baseUrl: remotes.ticketsUrl }),
    'nats-msg-id': createNatsNotifyTool({
      jetstream: async () => (await nats()).jetstream(),
      subject: remotes.natsSubject,
    }),
  } as const;
}

/** Activity options of the matrix: fast retries, a short heartbeat (a dead worker is noticed in 2 s). */
export const FAST_TOOL_OPTIONS = {
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '20 ms', maximumInterval: '200 ms', maximumAttempts: 6 },
} as const;

/** One agent per strategy (named after it), each with its strategy's tool under the name `effect`. */
export function strategyAgents(remotes: Remotes, nats: () => Promise<NatsConnection>): AgentRegistration[] {
  const tools = strategyTools(remotes, nats);
  return STRATEGIES.map((strategy) => ({
    agent: defineAgent({ name: strategy, model: promptedModel(), tools: { effect: tools[strategy] } }),
    tools: { effect: FAST_TOOL_OPTIONS },
  }));
}

/** A lazily connected NATS client. */
export function natsClient(servers: string): { get: () => Promise<NatsConnection>; close: () => Promise<void> } {
  let nc: Promise<NatsConnection> | undefined;
  return {
    get: () => (nc ??= connect({ servers })),
    close: async () => {
      if (nc !== undefined) await (await nc).close();
    },
  };
}

/** Counts what a call applied on its remote. */
export interface EffectCounter {
  /** Plans the input of a new call of `strategy` (an issue, a file path, a title unique to it). */
  plan(strategy: Strategy, id: string): PlannedCall;
  /** How many times the call planned with `id` was applied on the remote. */
  count(strategy: Strategy, call: PlannedCall): Promise<number>;
}

/** The counter over the test process's remotes. */
export function effectCounter(deps: {
  createIssue: () => number;
  comments: (issue: number) => number;
  tickets: (title: string) => number;
  natsMessages: (text: string) => Promise<number>;
  gitRemote: string;
}): EffectCounter {
  return {
    plan(strategy, id) {
      switch (strategy) {
        case 'none':
        case 'marker':
        case 'signed-marker':
          return { tool: 'effect', input: { issue: deps.createIssue(), body: `Reply ${id}` } };
        case 'git-trailer':
          return { tool: 'effect', input: { path: `runs/${id}.txt`, content: `${id}\n`, message: `Run ${id}` } };
        case 'idempotency-key':
          return { tool: 'effect', input: { title: `Ticket ${id}`, priority: 'normal' } };
        case 'nats-msg-id':
          return { tool: 'effect', input: { text: `Notify ${id}`, severity: 'info' } };
      }
    },
    async count(strategy, call) {
      const input = call.input as Record<string, string & number> & {
        issue: number;
        path: string;
        title: string;
        text: string;
      };
      switch (strategy) {
        case 'none':
        case 'marker':
        case 'signed-marker':
          return deps.comments(input.issue);
        case 'git-trailer': {
          const log = await runGit(['log', '--format=%H', 'main', '--', input.path], { cwd: deps.gitRemote }).catch(
            () => '',
          );
          return log.split('\n').filter((l) => l.trim() !== '').length;
        }
        case 'idempotency-key':
          return deps.tickets(input.title);
        case 'nats-msg-id':
          return deps.natsMessages(input.text);
      }
    },
  };
}

/**
 * The soak agent: one run posts five marked comments on its issue, three in step 0 and two in
 * step 1 (keys `<run>:post:<issue>:<n>`), then says "Done.". The prompt is the issue number.
 */
export function soakAgent(githubUrl: string): AgentRegistration {
  const octokit = new Octokit({ baseUrl: githubUrl, auth: BOT_TOKEN });
  const keyOf = (runId: string, issue: number, n: number) => `${runId}:post:${issue}:${n}`;
  const post = defineEffectTool({
    description: 'Posts comment n on the issue.',
    inputSchema: z.object({ issue: z.number(), n: z.number() }),
    effectKey: ({ issue, n }, ctx) => keyOf(ctx.run.runId, issue, n),
    alreadyApplied: async (key, { issue }) => {
      const comments = await octokit.paginate(octokit.rest.issues.listComments, {
        owner: OWNER,
        repo: REPO,
        issue_number: issue,
        per_page: 100,
      });
      const found = comments.find((c) => c.user?.login === BOT && findEffectMarkers(c.body ?? '').includes(key));
      return found === undefined ? undefined : { id: found.id };
    },
    execute: async ({ issue, n }, { context }) => {
      const body = `Comment ${n}\n${effectMarker(keyOf(context.run.runId, issue, n))}`;
      const { data } = await octokit.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: issue, body });
      return { id: data.id };
    },
  });
  const issueOf = (prompt: LanguageModelV4CallOptions['prompt']): number => {
    const user = prompt.find((m) => m.role === 'user');
    const part = Array.isArray(user?.content) ? user.content.find((c) => c.type === 'text') : undefined;
    return Number((part as { text: string } | undefined)?.text);
  };
  const calls = (issue: number, ns: number[]) => ns.map((n) => ({ toolName: 'post', input: { issue, n } }));
  return {
    agent: defineAgent({
      name: 'soak',
      model: scriptedModel([
        ({ prompt }) => ({ toolCalls: calls(issueOf(prompt), [0, 1, 2]) }),
        ({ prompt }) => ({ toolCalls: calls(issueOf(prompt), [3, 4]) }),
        { text: 'Done.' },
      ]),
      tools: { post },
    }),
    tools: { post: { ...FAST_TOOL_OPTIONS, retry: { ...FAST_TOOL_OPTIONS.retry, maximumAttempts: 50 } } },
  };
}
