// The one agent every benchmark side runs ("post N comments on issue #I, one per step, then
// stop"), three ways, as workers and as run starts; bench/history.ts, bench/throughput.ts and
// bench/scale.ts all build their sides here, so the sides cannot drift apart between benchmarks.
//   library  this library's agentWorkflow, the comment an effect tool (step-keyed effect key,
//            marker + alreadyApplied), on the effect store given
//   anchor   @temporalio/ai-sdk: generateText in the workflow, model calls through its
//            invokeModel activity, the comment a plain activity (bench/history-anchor-workflows.ts)
//   floor    bare Temporal: the same loop with canned model answers and minimal activity
//            inputs (bench/history-floor-workflows.ts)
import type { ProviderV4 } from '@ai-sdk/provider';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { LocalGitHubServer } from '../demo/github/index.js';
import { bundleWorkflowCode, DefaultLogger, type NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineAgent, defineEffectTool, effectMarker, findEffectMarkers, stepIndex } from '../src/index.js';
import { chamviWorkflowsPath, createAgentWorker } from '../worker/index.js';
import { startAgentRun } from '../client/index.js';
import { answerFor, benchModel, MAX_COMMENT_STEPS, promptFor } from './history-script.js';
import { BOT, listComments, openIssue, postComment, remoteActivities } from './history-remote.js';

export type Flavour = 'library' | 'anchor' | 'floor';

export const AGENT_NAME = 'bench-history';
export const INSTRUCTIONS = 'Post the comments you are asked for, one per step, then stop.';
export const WORKER_OPTIONS = { maxConcurrentActivityTaskExecutions: 200, maxConcurrentWorkflowTaskExecutions: 200 };

/** The library side's agent, its comment tool posting to the GitHub fake at `remoteUrl`. */
export function benchAgent(remoteUrl: string) {
  const comment = defineEffectTool({
    description: 'Posts a comment on the issue.',
    inputSchema: z.object({ issue: z.number(), body: z.string() }),
    // Keyed by model step (the spec's example for a redone step), so it reads options.messages.
    effectKey: ({ issue }, ctx, options) => `${ctx.run.runId}:comment:${issue}:${stepIndex(options)}`,
    alreadyApplied: async (key, { issue }) => {
      const found = (await listComments(remoteUrl, issue)).find(
        (c) => c.login === BOT && findEffectMarkers(c.body).includes(key),
      );
      return found === undefined ? undefined : { id: found.id };
    },
    execute: async ({ issue, body }, { context, messages }) => {
      const key = `${context.run.runId}:comment:${issue}:${stepIndex({ messages })}`;
      return postComment(remoteUrl, { issue, body: `${body}\n${effectMarker(key)}` });
    },
  });
  return defineAgent({
    name: AGENT_NAME,
    model: benchModel(),
    instructions: INSTRUCTIONS,
    maxSteps: MAX_COMMENT_STEPS + 1,
    tools: { comment },
  });
}

function anchorProvider(): ProviderV4 {
  const model = benchModel();
  const none = (): never => {
    throw new Error('only language models here');
  };
  const provider = { specificationVersion: 'v4', languageModel: () => model, embeddingModel: none, imageModel: none };
  return provider as unknown as ProviderV4;
}

const ANCHOR_WORKFLOWS = fileURLToPath(new URL('./history-anchor-workflows.ts', import.meta.url));
const FLOOR_WORKFLOWS = fileURLToPath(new URL('./history-floor-workflows.ts', import.meta.url));

/**
 * A side's workflow bundle, built ahead of the worker as Temporal advises for production, with what
 * the side's worker would add when it bundles at start: the library's preloaded modules (as
 * docs/operations/deployment.md tells users), the anchor plugin's bundler hook.
 */
export async function bundleSide(flavour: Flavour): Promise<string> {
  const logger = new DefaultLogger('WARN');
  if (flavour === 'library') {
    const workflowsPath = chamviWorkflowsPath();
    return (await bundleWorkflowCode({ workflowsPath, preloadModules: [workflowsPath], logger })).code;
  }
  if (flavour === 'anchor') {
    const plugins = [new AiSdkPlugin({ modelProvider: anchorProvider() })];
    return (await bundleWorkflowCode({ workflowsPath: ANCHOR_WORKFLOWS, plugins, logger })).code;
  }
  return (await bundleWorkflowCode({ workflowsPath: FLOOR_WORKFLOWS, logger })).code;
}

export interface SideWorkerOptions {
  readonly connection: NativeConnection;
  readonly taskQueue: string;
  readonly remoteUrl: string;
  /** The library side's effect store spec (ignored by the others). */
  readonly store: string;
  readonly workerOptions?: Record<string, unknown>;
  /** A file from {@link bundleSide}; absent, the worker bundles its workflows when it starts. */
  readonly workflowBundlePath?: string;
}

export async function createSideWorker(flavour: Flavour, options: SideWorkerOptions): Promise<Worker> {
  const { connection, taskQueue, remoteUrl, workflowBundlePath } = options;
  const workerOptions = { ...WORKER_OPTIONS, ...options.workerOptions };
  const workflows = (path: string) =>
    workflowBundlePath === undefined ? { workflowsPath: path } : { workflowBundle: { codePath: workflowBundlePath } };
  if (flavour === 'library')
    return createAgentWorker({
      connection,
      taskQueue,
      agents: [benchAgent(remoteUrl)],
      store: options.store,
      health: false,
      workerOptions: {
        ...workerOptions,
        ...(workflowBundlePath !== undefined ? { workflowBundle: { codePath: workflowBundlePath } } : {}),
      },
    });
  if (flavour === 'anchor')
    return Worker.create({
      ...workerOptions,
      connection,
      taskQueue,
      ...workflows(ANCHOR_WORKFLOWS),
      activities: remoteActivities(remoteUrl),
      plugins: [new AiSdkPlugin({ modelProvider: anchorProvider() })],
    });
  return Worker.create({
    ...workerOptions,
    connection,
    taskQueue,
    ...workflows(FLOOR_WORKFLOWS),
    activities: {
      ...remoteActivities(remoteUrl),
      cannedModelStep: async ({ issue, comments, step }: { issue: number; comments: number; step: number }) =>
        answerFor(step, issue, comments),
    },
  });
}

/** Starts one run of `comments` comment steps on issue `issue`. */
export async function startSideRun(
  client: Client,
  flavour: Flavour,
  run: { taskQueue: string; workflowId: string; issue: number; comments: number },
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const prompt = promptFor(run.issue, run.comments);
  if (flavour === 'library')
    return startAgentRun(client, { agent: AGENT_NAME, prompt, taskQueue: run.taskQueue, workflowId: run.workflowId });
  return client.workflow.start(flavour === 'anchor' ? 'anchorWorkflow' : 'floorWorkflow', {
    taskQueue: run.taskQueue,
    workflowId: run.workflowId,
    args: [{ issue: run.issue, comments: run.comments, prompt, instructions: INSTRUCTIONS }],
  });
}

export interface RunOutcome {
  readonly ms: number;
  readonly workflowId: string;
  readonly runId: string;
}

/** One run of `comments` comment steps on a fresh issue, to completion; fails unless it posted one comment per step. */
export async function runOnce(
  client: Client,
  remote: LocalGitHubServer,
  flavour: Flavour,
  taskQueue: string,
  comments: number,
): Promise<RunOutcome> {
  const issue = openIssue(remote);
  const workflowId = `bench-${flavour}-${randomUUID()}`;
  const started = performance.now();
  const handle = await startSideRun(client, flavour, { taskQueue, workflowId, issue, comments });
  await handle.result();
  const ms = performance.now() - started;
  const posted = remote.tracker.listComments('acme', 'widgets', issue)?.length ?? 0;
  if (posted !== comments) throw new Error(`${flavour}: a ${comments}-step run posted ${posted} comments`);
  return { ms, workflowId, runId: handle.firstExecutionRunId };
}

export interface RoundResult {
  readonly runsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** `concurrent` runs at once: runs per second over the round's wall time, and run latency quantiles in ms. */
export async function concurrentRound(concurrent: number, run: () => Promise<RunOutcome>): Promise<RoundResult> {
  const started = performance.now();
  const latencies = await Promise.all(Array.from({ length: concurrent }, async () => (await run()).ms));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { runsPerSecond: concurrent / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

/** The `q` quantile of ascending `sorted` (nearest rank). */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
}

export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}
