import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { WorkflowFailedError, type ApplicationFailure } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { scriptedModel, type ScriptEntry } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { createAgentWorker, type AgentEntry } from '../../worker/index.js';
import { agentProgressQuery } from '../../common/agent-progress.js';
import { startAgentRun, type StartAgentRunOptions } from '../../client/start-agent-run.js';
import { rollbackRun } from '../../client/rollback-run.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';
import { undoRun } from '../../examples/compensation/rollback.js';
import type { UIMessageChunk } from 'ai';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import { runUIMessageStream } from '../../worker/stream/run-ui-message-stream.js';
import type { ChamviEffectChunk } from '../../worker/stream/run-progress-parts.js';
import { NoteBoard, noteAgent, type NoteToolSetup } from '../fixtures/compensating-tools.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  bundle = await bundleTestWorkflows();
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** One note per step, then a step the script lacks: the model step fails and so does the run. */
const threeNotesThenFailure: ScriptEntry[] = [
  { toolCalls: [{ toolName: 'note', input: { text: 'a' } }] },
  { toolCalls: [{ toolName: 'note', input: { text: 'b' } }] },
  { toolCalls: [{ toolName: 'note', input: { text: 'c' } }] },
];

const failFast = { modelStep: { retry: { maximumAttempts: 1 } } } as const;
const quickCompensate = { retry: { initialInterval: '10 ms', maximumAttempts: 3 } } as const;

interface Setup {
  readonly script: ScriptEntry[];
  readonly run: Omit<StartAgentRunOptions, 'agent' | 'taskQueue' | 'prompt'>;
  readonly tool?: NoteToolSetup;
  /** The agent's own `compensateOn`. */
  readonly agentCompensateOn?: ReadonlyArray<'failure' | 'cancel'>;
}

async function withNotes<T>(
  setup: Setup,
  body: (ctx: { board: NoteBoard; start: () => ReturnType<typeof startAgentRun>; taskQueue: string }) => Promise<T>,
): Promise<T> {
  const board = new NoteBoard();
  const taskQueue = `q-${randomUUID()}`;
  const agents: AgentEntry[] = [
    {
      agent: noteAgent('noter', board, scriptedModel(setup.script), setup.tool, setup.agentCompensateOn),
      tools: { note: { retry: { initialInterval: '10 ms', maximumAttempts: 2 } } },
    },
  ];
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    agents,
    store: new MemoryEffectStore(),
    workerOptions: { workflowBundle: bundle },
  });
  const start = () =>
    startAgentRun(env.client, {
      agent: 'noter',
      prompt: 'Post notes.',
      taskQueue,
      workflowId: `compensation-${randomUUID()}`,
      ...setup.run,
    });
  return worker.runUntil(body({ board, start, taskQueue }));
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  return (error as WorkflowFailedError).cause as ApplicationFailure;
}

describe('compensation of a failed run', () => {
  it('a run that fails after three applied effects undoes all three, last applied first, each once', async () => {
    await withNotes(
      { script: threeNotesThenFailure, run: { compensateOn: ['failure'], activityOptions: failFast } },
      async ({ board, start }) => {
        const handle = await start();
        const failure = await failureOf(handle.result());
        expect(failure.type).not.toBe('RollbackIncompleteError');
        expect(board.log).toEqual(['post:a', 'post:b', 'post:c', 'delete:c', 'delete:b', 'delete:a']);
        const progress = await handle.query(agentProgressQuery);
        expect(progress.status).toBe('rolled-back');
        expect(progress.effects.map((e) => e.compensation)).toEqual([
          { status: 'compensated', outcome: 'executed', attempts: 1 },
          { status: 'compensated', outcome: 'executed', attempts: 1 },
          { status: 'compensated', outcome: 'executed', attempts: 1 },
        ]);
      },
    );
  });

  it("the agent's compensateOn applies to a run that sets none; a run's own [] overrides it", async () => {
    const script = threeNotesThenFailure;
    await withNotes(
      { script, run: { activityOptions: failFast }, agentCompensateOn: ['failure'] },
      async ({ board, start }) => {
        await failureOf((await start()).result());
        expect(board.count('delete')).toBe(3);
      },
    );
    await withNotes(
      { script, run: { compensateOn: [], activityOptions: failFast }, agentCompensateOn: ['failure'] },
      async ({ board, start }) => {
        await failureOf((await start()).result());
        expect(board.count('delete')).toBe(0);
      },
    );
  });

  it('without compensateOn a failed run undoes nothing (the default is none)', async () => {
    await withNotes({ script: threeNotesThenFailure, run: { activityOptions: failFast } }, async ({ board, start }) => {
      const handle = await start();
      await failureOf(handle.result());
      expect(board.count('delete')).toBe(0);
      expect(board.notes.size).toBe(3);
      expect((await handle.query(agentProgressQuery)).effects.every((e) => e.compensation === undefined)).toBe(true);
    });
  });

  it('a compensation that keeps failing is reported with its last error and attempts, the others still run, and the run fails with RollbackIncompleteError', async () => {
    let outage = true;
    await withNotes(
      {
        script: threeNotesThenFailure,
        run: { compensateOn: ['failure'], activityOptions: { ...failFast, compensate: quickCompensate } },
        tool: {
          beforeDelete: (text) => {
            if (text === 'b' && outage) throw new Error('notes API is down');
          },
        },
      },
      async ({ board, start }) => {
        const handle = await start();
        const failure = await failureOf(handle.result());
        expect(failure.type).toBe('RollbackIncompleteError');
        expect(failure.message).toMatch(/rollback incomplete, 1 of 3 compensation\(s\) failed/);
        expect(board.log).toEqual(['post:a', 'post:b', 'post:c', 'delete:c', 'delete:a']);
        const progress = await handle.query(agentProgressQuery);
        expect(progress.status).toBe('rollback-incomplete');
        expect(progress.effects[1]?.compensation).toEqual({
          status: 'compensation-failed',
          attempts: 3,
          error: { type: 'Error', message: 'notes API is down' },
        });
        // The UI stream shows each call's compensation and says the rollback is incomplete.
        const chunks: UIMessageChunk[] = [];
        const reader = runUIMessageStream({
          client: env.client,
          workflowId: handle.workflowId,
          stream: new MemoryRunStreamStore(),
        }).getReader();
        for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
        const effectParts = chunks.filter((c) => c.type === 'data-chamvi-effect') as ChamviEffectChunk[];
        expect(effectParts.map((c) => c.data.compensation?.status)).toEqual([
          'compensated',
          'compensation-failed',
          'compensated',
        ]);
        expect(chunks.at(-1)).toEqual({ type: 'error', errorText: expect.stringMatching(/rollback incomplete/) });
        // A rollback while the remote is still down fails the same way, and says what is left (the docs' example).
        const warned: string[] = [];
        const warn = jest.spyOn(console, 'warn').mockImplementation((line: string) => void warned.push(line));
        try {
          await expect(undoRun(env.client, handle.workflowId)).rejects.toThrow(WorkflowFailedError);
        } finally {
          warn.mockRestore();
        }
        expect(warned).toEqual([expect.stringMatching(/^not undone: note .*: notes API is down$/)]);
        expect(board.count('delete')).toBe(2);
        // Once the remote is back, a rollback undoes what is left, and only that.
        outage = false;
        const rolledBack = await rollbackRun(env.client, handle.workflowId);
        expect(board.log).toEqual(['post:a', 'post:b', 'post:c', 'delete:c', 'delete:a', 'delete:b']);
        expect(rolledBack.effects.map((e) => e.compensation?.outcome)).toEqual(['recorded', 'executed', 'recorded']);
      },
    );
  });
});

describe('which calls are compensated', () => {
  it('a call that did not apply is not compensated, and calls sharing one key are undone once', async () => {
    await withNotes(
      {
        script: [
          {
            toolCalls: [
              { toolName: 'note', input: { text: 'same' } },
              { toolName: 'note', input: { text: 'same' } },
            ],
          },
          // The remote refuses it: the call fails, nothing applied.
          { toolCalls: [{ toolName: 'note', input: { text: 'refused' } }] },
        ],
        run: { compensateOn: ['failure'], activityOptions: failFast },
      },
      async ({ board, start }) => {
        const handle = await start();
        await failureOf(handle.result());
        expect(board.log).toEqual(['post:same', 'delete:same']);
        const { effects, status } = await handle.query(agentProgressQuery);
        // Nothing was asked to undo the failed call: asked, its activity would refuse it (no record) and leave the rollback incomplete.
        expect(status).toBe('rolled-back');
        expect(effects.map((e) => [e.outcome, e.compensation?.status])).toEqual([
          ['executed', 'compensated'],
          ['recorded', undefined],
          ['failed', undefined],
        ]);
      },
    );
  });
});

describe('rollbackRun', () => {
  it('rolls a completed run back once: a second rollback applies nothing and answers the same', async () => {
    await withNotes({ script: [...threeNotesThenFailure, { text: 'Done.' }], run: {} }, async ({ board, start }) => {
      const handle = await start();
      await handle.result();
      const first = await rollbackRun(env.client, handle.workflowId);
      const second = await rollbackRun(env.client, handle.workflowId);
      expect(board.log).toEqual(['post:a', 'post:b', 'post:c', 'delete:c', 'delete:b', 'delete:a']);
      expect(first.compensated).toBe(3);
      expect(second).toEqual(first);
    });
  });

  it('refuses a run that is still running', async () => {
    await withNotes(
      { script: [{ toolCalls: [{ toolName: 'note', input: { text: 'a' } }] }], run: {} },
      async ({ start }) => {
        const handle = await start();
        await expect(rollbackRun(env.client, handle.workflowId)).rejects.toMatchObject({
          name: 'RunNotFinishedError',
        });
        await handle.terminate('test over');
      },
    );
  });
});
