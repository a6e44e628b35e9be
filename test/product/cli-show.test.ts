// `chamvi show <workflow id>`: a run's conversation, read from the store.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { notingAgent } from '../fixtures/noting-agent.js';
import { runCli } from './run-cli.js';

let env: TestWorkflowEnvironment;
let dir: string;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-show-'));
}, 120_000);

afterAll(async () => {
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

describe('chamvi show', () => {
  it("prints a finished run's conversation from the store: roles, texts, tool calls and results; --json whole", async () => {
    const path = join(dir, 'effects.db');
    const store = new SqliteEffectStore(path);
    const taskQueue = `q-${randomUUID()}`;
    const workflowId = `show-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [notingAgent({ notes: 2 })],
      store,
      health: false,
    });
    await worker.runUntil(async () => {
      await (
        await startAgentRun(env.client, { agent: 'noter', prompt: 'Write two notes.', taskQueue, workflowId })
      ).result();
    });
    await store.close();

    const shown = await runCli(['show', workflowId, '--store', path, '--address', env.address]);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^conversation of workflow ${workflowId} \\(run [0-9a-f-]+, completed, from its output\\):$`),
    );
    expect(lines.slice(1)).toEqual([
      'user: Write two notes.',
      'assistant: → note({"text":"note 0"}) [call-0-0]',
      'tool: ← note: {"type":"json","value":{"noted":"note 0"}} [call-0-0]',
      'assistant: → note({"text":"note 1"}) [call-1-0]',
      'tool: ← note: {"type":"json","value":{"noted":"note 1"}} [call-1-0]',
      'assistant: Noted.',
    ]);

    const json = await runCli(['show', workflowId, '--store', path, '--address', env.address, '--json']);
    const parsed = JSON.parse(json.stdout) as { status: string; messages: Array<{ role: string }> };
    expect(parsed.status).toBe('COMPLETED');
    expect(parsed.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
  }, 120_000);

  it('without --store (or CHAMVI_STORE) it says what it needs, exit 2', async () => {
    const shown = await runCli(['show', 'some-workflow']);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toContain('show: --store is required');
  });
});
