import { existsSync, rmSync } from 'node:fs';
import { Octokit } from '@octokit/rest';
import { createDemoCommentTool } from '../../../demo/tools.js';
import { defineAgent } from '../../../src/index.js';
import type { AgentRegistration } from '../../../worker/index.js';
import { chatModel } from './chat-model.js';

/** The chat example's agent name. */
export const CHAT_AGENT = 'chat-responder';
/** The local tracker's repository the agent comments on. */
export const CHAT_REPO = { owner: 'acme', repo: 'widgets' } as const;

/** Where the chat agent writes and how fast its scripted model speaks. */
export interface ChatAgentConfig {
  /** The GitHub REST base URL (the local tracker's). */
  readonly githubUrl: string;
  /** The bot's token on that tracker. Default `bot-token` (the local tracker's). */
  readonly token?: string;
  /** HMAC secret of the comments' signed effect markers. */
  readonly markerSecret: string;
  /** Milliseconds per streamed word of the scripted model. Default 120. */
  readonly tokenMs?: number;
  /**
   * A file that, when it exists right after a comment was posted, makes this process remove it and
   * SIGKILL itself before the comment's result is recorded: the crash window, on demand.
   */
  readonly crashFlag?: string;
}

/**
 * The chat example's registration: the demo's responder comment tool (one comment per run and
 * issue, a signed marker that `alreadyApplied` finds again after a crash) behind a user approval,
 * with short heartbeats and retries so a killed worker's calls move on within seconds.
 */
export function chatAgentRegistration(config: ChatAgentConfig): AgentRegistration {
  const octokit = new Octokit({ baseUrl: config.githubUrl, auth: config.token ?? 'bot-token' });
  const { crashFlag } = config;
  if (crashFlag !== undefined) {
    octokit.hook.after('request', (_response, options) => {
      // options.url is the route template (/repos/{owner}/{repo}/issues/{issue_number}/comments)
      if (options.method !== 'POST' || !/\/comments$/.test(options.url) || !existsSync(crashFlag)) return;
      rmSync(crashFlag, { force: true });
      process.stdout.write('crash: comment posted; SIGKILL before its result is recorded\n');
      process.kill(process.pid, 'SIGKILL');
    });
  }
  const agent = defineAgent({
    name: CHAT_AGENT,
    model: chatModel(config.tokenMs !== undefined ? { tokenMs: config.tokenMs } : {}),
    instructions: `You answer issues of ${CHAT_REPO.owner}/${CHAT_REPO.repo} with one comment each.`,
    tools: {
      comment: createDemoCommentTool({
        octokit,
        ...CHAT_REPO,
        botLogin: 'chamvi-bot',
        markerSecret: config.markerSecret,
      }),
    },
  });
  return {
    agent,
    // Every comment waits for the page's Approve / Deny (a signed decision; days are fine).
    toolApproval: { comment: 'user-approval' },
    toolDefaults: {
      startToCloseTimeout: '30 seconds',
      heartbeatTimeout: '2 seconds',
      retry: { initialInterval: '200 ms', maximumInterval: '1 second', maximumAttempts: 20 },
    },
  };
}
