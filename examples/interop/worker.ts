// The worker of the interop example: @temporalio/ai-sdk's plugin (model calls) and chamvi's
// plugin (effect tools, effect store) on one worker. Run: node --import tsx examples/interop/worker.ts
// with a Temporal server at TEMPORAL_ADDRESS, GITHUB_TOKEN, GITHUB_REPOSITORY=owner/repo and
// OPENAI_API_KEY; then start triageWorkflow({ issue }) on task queue "interop".
import { createOpenAI } from '@ai-sdk/openai';
import { Octokit } from '@octokit/rest';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { defineAgent } from '@chamvi/temporal';
import { createEffectStore } from '@chamvi/temporal/stores';
import { chamviPlugin } from '@chamvi/temporal/worker';
import { createGitHubCommentTool } from '../github/comment-tool.js';

const [owner = '', repo = ''] = (process.env['GITHUB_REPOSITORY'] ?? '').split('/');
const octokit = new Octokit({ auth: process.env['GITHUB_TOKEN'] });
const { data: me } = await octokit.rest.users.getAuthenticated();

// The effect tools live in a registered agent; workflows call them by agent and tool name. Its
// model is never called (the workflow's own loop calls the model), so any id will do.
const toolbox = defineAgent({
  name: 'toolbox',
  model: 'unused',
  tools: {
    comment: createGitHubCommentTool({
      octokit,
      owner,
      repo,
      botLogin: me.login,
      markerSecret: process.env['CHAMVI_MARKER_SECRET'] ?? 'change-me-change-me',
    }),
  },
});

const store = createEffectStore(process.env['CHAMVI_STORE'] ?? '.chamvi/interop-effects.db');
const worker = await Worker.create({
  connection: await NativeConnection.connect({ address: process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233' }),
  taskQueue: 'interop',
  workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  plugins: [
    new AiSdkPlugin({ modelProvider: createOpenAI() }),
    chamviPlugin({ agents: [toolbox], store, workflowsPath: false }),
  ],
});
await worker.run();
