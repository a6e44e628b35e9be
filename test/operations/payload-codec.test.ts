import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { tool } from 'ai';
import { defineAgent, defineEffectTool } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { FlakyEffectStore } from '../../testing/flaky-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createDevServerEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker } from '../../worker/index.js';
import { startAgentRun } from '../../client/start-agent-run.js';
import { CLI_MAIN, ROOT, runCli } from '../product/run-cli.js';
import { dataConverter, TOY_ENCODING } from './fixtures/toy-codec.js';

const CODEC_MODULE = fileURLToPath(new URL('./fixtures/toy-codec.ts', import.meta.url));
const SECRET = 'codec-test-approval-secret-0123456789';

let env: TestWorkflowEnvironment;
let client: Client;
let dir: string;

beforeAll(async () => {
  env = await createDevServerEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'chamvi-codec-'));
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default', dataConverter });
}, 120_000);

afterAll(async () => {
  await env?.teardown();
  rmSync(dir, { recursive: true, force: true });
});

const stash = defineEffectTool({
  description: 'Stores a secret.',
  inputSchema: z.object({ secret: z.string() }),
  execute: async ({ secret }) => ({ stored: secret.length }),
});
const peek = tool({
  description: 'Reads the vault.',
  inputSchema: z.object({}),
  execute: async () => ({ items: 1 }),
});
const vault = defineAgent({
  name: 'vault',
  model: scriptedModel([
    {
      toolCalls: [
        { toolName: 'stash', input: { secret: 'hunter2' } },
        { toolName: 'peek', input: {} },
      ],
    },
    { text: 'Stashed.' },
  ]),
  instructions: 'Keep secrets.',
  tools: { stash, peek },
});

/** The encodings of every payload the history's activity events carry, by activity type. */
async function activityPayloadEncodings(workflowId: string): Promise<Map<string, Set<string>>> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const typeOf = new Map<string, string>();
  const encodings = new Map<string, Set<string>>();
  const add = (
    type: string,
    payloads: ReadonlyArray<{ metadata?: Record<string, Uint8Array> | null }> | null | undefined,
  ) => {
    for (const p of payloads ?? []) {
      const set = encodings.get(type) ?? new Set<string>();
      set.add(new TextDecoder().decode(p.metadata?.['encoding'] ?? new Uint8Array()));
      encodings.set(type, set);
    }
  };
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const type = scheduled.activityType?.name ?? '?';
      typeOf.set(String(e.eventId), type);
      add(type, scheduled.input?.payloads);
    }
    const completed = e.activityTaskCompletedEventAttributes;
    if (completed) add(typeOf.get(String(completed.scheduledEventId)) ?? '?', completed.result?.payloads);
  }
  return encodings;
}

describe('a payload codec on the worker and the client', () => {
  it('every activity of an agent run (model step, effect call, tool call, record, approval check) runs with encoded payloads; the CLI reads them with --data-converter', async () => {
    const taskQueue = `codec-${randomUUID()}`;
    // The first record write fails, so the record activity runs too.
    const store = new FlakyEffectStore(new MemoryEffectStore(), { failNext: { complete: 1 } });
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      taskQueue,
      agents: [{ agent: vault, toolApproval: { stash: 'user-approval' } }],
      store,
      approvalSecret: SECRET,
      workerOptions: { dataConverter },
    });
    await worker.runUntil(async () => {
      const workflowId = `codec-${randomUUID()}`;
      const handle = await startAgentRun(client, { agent: 'vault', prompt: 'stash it', taskQueue, workflowId });
      const flags = ['--address', env.address];

      let pending = await runCli(['approvals', workflowId, '--json', '--data-converter', CODEC_MODULE, ...flags]);
      for (let i = 0; i < 50 && pending.code !== 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        pending = await runCli(['approvals', workflowId, '--json', '--data-converter', CODEC_MODULE, ...flags]);
      }
      expect(pending.stderr).toBe('');
      expect(JSON.parse(pending.stdout)).toEqual([
        expect.objectContaining({ toolName: 'stash', toolCallId: 'call-0-0' }),
      ]);

      // Without the codec the CLI cannot read the run's answer, and says why.
      const blind = await runCli(['approvals', workflowId, ...flags]);
      expect(blind.code).not.toBe(0);
      expect(blind.stderr).toContain(TOY_ENCODING);
      expect(blind.stderr).toContain('--data-converter');

      const approve = await runCli(['approve', workflowId, 'call-0-0', '--data-converter', CODEC_MODULE, ...flags], {
        CHAMVI_APPROVAL_SECRET: SECRET,
      });
      expect(approve.stderr).toBe('');
      expect(approve.code).toBe(0);

      const result = await handle.result();
      expect(result.text).toBe('Stashed.');
      expect(result.effects).toEqual([
        expect.objectContaining({ toolName: 'stash', outcome: 'executed', recordPending: true }),
      ]);
      expect(store.failures.complete).toBe(1);

      const encodings = await activityPayloadEncodings(workflowId);
      expect([...encodings.keys()].sort()).toEqual(
        [
          'chamvi.effectCall',
          'chamvi.modelStep',
          'chamvi.recordEffect',
          'chamvi.toolCall',
          'chamvi.verifyApproval',
        ].sort(),
      );
      for (const [type, seen] of encodings)
        expect({ type, encodings: [...seen] }).toEqual({ type, encodings: [TOY_ENCODING] });
    });
  }, 90_000);

  it('chamvi worker and chamvi run --wait take the codec module with --data-converter', async () => {
    const taskQueue = `codec-cli-${randomUUID()}`;
    const worker: ChildProcess = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        CLI_MAIN,
        'worker',
        '--agents',
        'test/product/fixtures/note-agents.ts',
        '--store',
        join(dir, 'effects.db'),
        '--data-converter',
        CODEC_MODULE,
        '--address',
        env.address,
        '--task-queue',
        taskQueue,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let output = '';
      await new Promise<void>((resolve, reject) => {
        worker.stdout?.on('data', (c: Buffer) => {
          output += c.toString();
          if (output.includes('\nready\n')) resolve();
        });
        worker.stderr?.on('data', (c: Buffer) => (output += c.toString()));
        worker.once('exit', (code) => reject(new Error(`worker exited (${String(code)}):\n${output}`)));
      });
      const workflowId = `codec-cli-${randomUUID()}`;
      const run = await runCli([
        'run',
        'noter',
        '--prompt',
        'note it',
        '--wait',
        '--workflow-id',
        workflowId,
        '--data-converter',
        CODEC_MODULE,
        '--address',
        env.address,
        '--task-queue',
        taskQueue,
      ]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Noted.');
      const encodings = await activityPayloadEncodings(workflowId);
      expect([...(encodings.get('chamvi.modelStep') ?? [])]).toEqual([TOY_ENCODING]);
    } finally {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
  }, 90_000);
});
