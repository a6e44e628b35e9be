// The demo's agents module, loaded by `chamvi worker --agents <this file>` (the demo, npm start,
// starts two such workers; the docker-compose worker runs it too). Configured by env:
//   CHAMVI_GITHUB_URL    GitHub REST API base (default https://api.github.com; the demo's local tracker)
//   CHAMVI_GITHUB_TOKEN  token the bot writes with (default bot-token, the local tracker's)
//   CHAMVI_GITHUB_REPO   owner/repo (default acme/widgets)
//   CHAMVI_GITHUB_BOT    the bot's login: only its comments count as applied (default chamvi-bot)
//   CHAMVI_MARKER_SECRET HMAC secret of the signed effect markers (default: a demo secret)
//   CHAMVI_DEMO_CRASH    "after-first-comment": SIGKILL this process right after the first comment
//                        is posted, before its result is recorded (the crash window)
//   OPENAI_API_KEY / OPENAI_BASE_URL / CHAMVI_MODEL   a real model instead of the scripted one
import { Octokit } from '@octokit/rest';
import { defineAgent } from '@chamvi/temporal';
import type { AgentRegistration } from '@chamvi/temporal/worker';
import { demoModel } from './model.js';
import { createDemoCommentTool, createDemoLabelTool } from './tools.js';

export const DEMO_AGENT = 'responder';

/** Short heartbeats and retries, so a crashed worker's activity is retried within seconds. */
const FAST_RETRY = {
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '200 ms', maximumInterval: '2 seconds', maximumAttempts: 20 },
} as const;

export async function agents(env: NodeJS.ProcessEnv = process.env): Promise<AgentRegistration[]> {
  const [owner = 'acme', repo = 'widgets'] = (env['CHAMVI_GITHUB_REPO'] || 'acme/widgets').split('/');
  const octokit = new Octokit({
    baseUrl: env['CHAMVI_GITHUB_URL'] || 'https://api.github.com',
    auth: env['CHAMVI_GITHUB_TOKEN'] || 'bot-token',
  });
  if (env['CHAMVI_DEMO_CRASH'] === 'after-first-comment') {
    octokit.hook.after('request', (_response, options) => {
      // options.url is the route template (/repos/{owner}/{repo}/issues/{issue_number}/comments)
      if (options.method === 'POST' && /\/issues\/[^/]+\/comments$/.test(options.url)) {
        const number = (options as { issue_number?: unknown }).issue_number;
        const issue = typeof number === 'number' || typeof number === 'string' ? String(number) : '?';
        process.stdout.write(`crash: comment posted on issue #${issue}; SIGKILL before its result is recorded\n`);
        process.kill(process.pid, 'SIGKILL');
      }
    });
  }
  const { model } = await demoModel(env);
  const responder = defineAgent({
    name: DEMO_AGENT,
    model,
    instructions:
      `You triage new issues of ${owner}/${repo}. For the issue in the prompt, post exactly one short, helpful comment ` +
      'with the comment tool and add one label (bug, question or enhancement) with the label tool, then reply with a one-line summary.',
    tools: {
      comment: createDemoCommentTool({
        octokit,
        owner,
        repo,
        botLogin: env['CHAMVI_GITHUB_BOT'] || 'chamvi-bot',
        markerSecret: env['CHAMVI_MARKER_SECRET'] || 'chamvi-demo-secret',
      }),
      label: createDemoLabelTool({ octokit, owner, repo }),
    },
  });
  return [{ agent: responder, toolDefaults: FAST_RETRY }];
}
