import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalGitHubServer } from '../../demo/github/index.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { startChildWorker } from '../fixtures/child-worker.js';
import { commentsOn, openIssue } from '../fixtures/responder.js';
import { freePort, spawnWorker, stopSpawnedWorkers } from './fixtures/spawn-worker.js';
import { logLines } from './fixtures/json-logs.js';

const TELEMETRY_WORKER = fileURLToPath(new URL('./fixtures/telemetry-worker.ts', import.meta.url));

let env: TestWorkflowEnvironment;
let github: LocalGitHubServer;
let dir: string;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  github = await new LocalGitHubServer().start();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-telemetry-'));
}, 120_000);

afterAll(async () => {
  await stopSpawnedWorkers();
  await github?.stop();
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

/** The Prometheus exposition text of the endpoint, once it has a sample matching `until`. */
async function scrape(port: number, until: RegExp): Promise<string> {
  let text = '';
  for (let i = 0; i < 50; i++) {
    text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    if (until.test(text)) return text;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return text;
}

/** Sample lines of `metric` whose labels include every one of `labels`. */
function samples(text: string, metric: string, labels: Record<string, string>): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${metric}{`) || line.startsWith(`${metric} `))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)));
}

function setup(): { issue: number; taskQueue: string; common: Record<string, string> } {
  const issue = openIssue(github);
  const taskQueue = `telemetry-${randomUUID()}`;
  return {
    issue,
    taskQueue,
    common: {
      TEMPORAL_ADDRESS: env.address,
      TASK_QUEUE: taskQueue,
      GITHUB_URL: github.url,
      ISSUE: String(issue),
      STORE: `sqlite:${join(dir, `effects-${randomUUID()}.db`)}`,
    },
  };
}

describe('effect-call metrics and logs through the Temporal runtime', () => {
  it('after a SIGKILL in the crash window, the survivor exports chamvi_effect_calls{outcome="reconciled"} to Prometheus and logs the call at info', async () => {
    const { issue, taskQueue, common } = setup();
    const doomed = await startChildWorker({ ...common, CRASH: 'after-comment' });
    const handle = await startAgentRun(env.client, { agent: 'responder', prompt: `Answer issue ${issue}`, taskQueue });
    expect(await doomed.exited).toBe('SIGKILL');

    const port = await freePort();
    const survivor = await spawnWorker(TELEMETRY_WORKER, { ...common, PROMETHEUS: `127.0.0.1:${port}` });
    try {
      const result = await handle.result();
      expect(result.effects).toEqual([expect.objectContaining({ outcome: 'reconciled', attempts: 2 })]);
      expect(commentsOn(github, issue)).toBe(1);

      const text = await scrape(port, /chamvi_effect_calls\{[^}]*reconciled/);
      const reconciled = samples(text, 'chamvi_effect_calls', { tool: 'comment', outcome: 'reconciled' });
      expect(reconciled).toHaveLength(1);
      expect(reconciled[0]).toMatch(/ 1$/);
      expect(samples(text, 'chamvi_effect_call_latency_count', { tool: 'comment', outcome: 'reconciled' })).toEqual([
        expect.stringMatching(/ 1$/),
      ]);
      process.stdout.write(
        `--- scraped from the survivor's Prometheus endpoint ---\n${text
          .split('\n')
          .filter((l) => l.startsWith('chamvi_') || l.startsWith('# HELP chamvi_') || l.startsWith('# TYPE chamvi_'))
          .filter((l) => !/_bucket\{/.test(l) || /le="(100|1000|\+Inf)"/.test(l))
          .join('\n')}\n`,
      );

      const calls = logLines(survivor).filter((l) => l.meta['outcome'] !== undefined && l.meta['tool'] === 'comment');
      expect(calls).toEqual([
        expect.objectContaining({
          level: 'INFO',
          meta: expect.objectContaining({
            tool: 'comment',
            key: result.effects[0]?.key,
            outcome: 'reconciled',
            attempt: 2,
            durationMs: expect.any(Number),
            workflowId: handle.workflowId,
            activityType: 'chamvi.effectCall',
          }),
        }),
      ]);
    } finally {
      await survivor.stop();
    }
  }, 90_000);

  it('a record write that failed and was written by the record activity counts in chamvi_effect_record_retries', async () => {
    const { issue, taskQueue, common } = setup();
    const port = await freePort();
    const worker = await spawnWorker(TELEMETRY_WORKER, {
      ...common,
      PROMETHEUS: `127.0.0.1:${port}`,
      FAIL_COMPLETE: '1',
    });
    try {
      const handle = await startAgentRun(env.client, {
        agent: 'responder',
        prompt: `Answer issue ${issue}`,
        taskQueue,
      });
      const result = await handle.result();
      expect(result.effects).toEqual([expect.objectContaining({ outcome: 'executed', recordPending: true })]);
      const text = await scrape(port, /chamvi_effect_record_retries\{/);
      expect(samples(text, 'chamvi_effect_record_retries', { tool: 'comment' })).toEqual([
        expect.stringMatching(/ 1$/),
      ]);
    } finally {
      await worker.stop();
    }
  }, 60_000);

  it('a retry that finds the key held by a slow attempt still running counts in chamvi_effect_busy_waits', async () => {
    const { issue, taskQueue, common } = setup();
    const port = await freePort();
    // Attempt 1 outlives its 1 s start-to-close timeout (its execute ignores the abort); the retries
    // find its key busy until it records, and then answer from the record.
    const worker = await spawnWorker(TELEMETRY_WORKER, {
      ...common,
      PROMETHEUS: `127.0.0.1:${port}`,
      SLOW_COMMENT_MS: '3000',
      COMMENT_TIMEOUT: '1 second',
    });
    try {
      const handle = await startAgentRun(env.client, {
        agent: 'responder',
        prompt: `Answer issue ${issue}`,
        taskQueue,
      });
      const result = await handle.result();
      expect(commentsOn(github, issue)).toBe(1);
      expect(result.effects).toEqual([expect.objectContaining({ outcome: 'recorded' })]);
      const text = await scrape(port, /chamvi_effect_busy_waits\{/);
      const busy = samples(text, 'chamvi_effect_busy_waits', { tool: 'comment' });
      expect(busy).toHaveLength(1);
      expect(Number(busy[0]?.split(' ').pop())).toBeGreaterThanOrEqual(1);
    } finally {
      await worker.stop();
    }
  }, 60_000);
});
