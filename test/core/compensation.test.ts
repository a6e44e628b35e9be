import { describe, expect, it } from '@jest/globals';
import { createToolContext } from '../../src/context/tool-context.js';
import { applyCompensation, compensationKey } from '../../src/effects/compensation.js';
import { CompensationRefusedError, EffectStoreError } from '../../src/errors/errors.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import type { EffectTool } from '../../src/effects/define-effect-tool.js';
import { defineAgent, defineEffectTool } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { NoteBoard, noteTool } from '../fixtures/compensating-tools.js';

const quiet = { warn: () => undefined };
const ctxOf = (runId = 'run-1') => createToolContext({ runId, agent: 'noter' });

/** Posts one note through the protocol and answers the board, the store, the tool and the call's key. */
async function posted(setup: Parameters<typeof noteTool>[1] = {}) {
  const board = new NoteBoard();
  const store = new MemoryEffectStore();
  const tool = noteTool(board, setup) as unknown as EffectTool;
  const ctx = ctxOf();
  const { report } = await applyEffect(
    { tool, toolName: 'note', input: { text: 'a' }, ctx, options: { toolCallId: 'c1', messages: [], context: ctx } },
    { store, logger: quiet },
  );
  const undo = (overrides: Partial<Parameters<typeof applyCompensation>[0]> = {}) =>
    applyCompensation(
      { tool, toolName: 'note', input: { text: 'a' }, ctx, key: report.key, toolCallId: 'c1', ...overrides },
      { store, logger: quiet },
    );
  return { board, store, tool, key: report.key, undo };
}

describe('a compensation is an effect under <key>:compensate', () => {
  it('undoes the effect with its recorded result and records the undo under <key>:compensate', async () => {
    const { board, store, key, undo } = await posted();
    const { result, report } = await undo();
    expect(board.log).toEqual(['post:a', 'delete:a']);
    expect(result).toEqual({ deleted: 1 });
    expect(report).toMatchObject({ key: compensationKey(key), outcome: 'executed' });
    expect(report.toolCallId).toBe('c1');
    expect(await store.get(`${key}:compensate`)).toMatchObject({ origin: 'executed', result: { deleted: 1 } });
  });

  it('compensates an effect that alreadyApplied found (origin reconciled), as one it executed', async () => {
    const { store, key, undo } = await posted();
    const applied = await store.get(key);
    await store.put('run-1:note:found', { ...applied!, origin: 'reconciled' });
    const { report } = await undo({ key: 'run-1:note:found' });
    expect(report.key).toBe(compensationKey('run-1:note:found'));
    expect(await store.get(compensationKey('run-1:note:found'))).toBeDefined();
  });

  it('a recorded undo is answered from the store: compensate does not run again', async () => {
    const { board, undo } = await posted();
    await undo();
    const again = await undo();
    expect(again.report.outcome).toBe('recorded');
    expect(board.count('delete')).toBe(1);
  });

  it('a crash after the undo and before its record is reconciled by alreadyCompensated, not undone twice', async () => {
    let crash = true;
    const { board, store, key, undo } = await posted({
      afterDelete: () => {
        if (crash) throw new Error('worker died after the delete');
      },
    });
    await expect(undo()).rejects.toThrow('worker died after the delete');
    expect(await store.get(compensationKey(key))).toBeUndefined();
    crash = false;
    const retry = await undo();
    expect(retry.report.outcome).toBe('reconciled');
    expect(board.count('delete')).toBe(1);
  });

  it('without alreadyCompensated the retry runs compensate again (the guarantee ends where the remote cannot check)', async () => {
    let crash = true;
    let deletes = 0;
    const { undo } = await posted({
      checksUndo: false,
      beforeDelete: () => void deletes++,
      afterDelete: () => {
        if (crash) throw new Error('worker died after the delete');
      },
    });
    await expect(undo()).rejects.toThrow();
    crash = false;
    expect((await undo()).report.outcome).toBe('executed');
    expect(deletes).toBe(2);
  });
});

describe('a compensation reads the original record and refuses what it does not vouch for', () => {
  it.each([
    ['no record of the key', { key: 'run-1:note:unknown' }, /holds no record/],
    ['a record of another tool', { toolName: 'other' }, /of tool "note"/],
    ['another input', { input: { text: 'b' } }, /another input/],
    ['another run', { ctx: ctxOf('run-2') }, /belongs to run "run-1"/],
    [
      'a record whose origin is not that of an applied effect (an edited row)',
      { key: 'run-1:note:recorded-only' },
      /origin is "recorded"/,
    ],
    ['a record with no result', { key: 'run-1:note:unserializable' }, /recorded no result to undo from/],
  ])('refuses %s, undoing nothing', async (_what, overrides, message) => {
    const { board, store, undo } = await posted();
    // Rows as a store could hold them: the origin of what a store only copied, a result that was not kept.
    await store.put('run-1:note:recorded-only', {
      toolName: 'note',
      result: 1,
      origin: 'recorded' as never,
      runId: 'run-1',
    });
    await store.put('run-1:note:unserializable', {
      toolName: 'note',
      result: undefined,
      origin: 'executed',
      runId: 'run-1',
      unserializable: 'a function',
    });
    const refused = await undo(overrides).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(CompensationRefusedError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toMatch(message);
    expect(board.count('delete')).toBe(0);
  });

  it('a store that cannot be read fails the undo with an EffectStoreError saying "read", undoing nothing', async () => {
    const { board, store, undo } = await posted();
    store.get = () => Promise.reject(new Error('connection refused'));
    const failed = await undo().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(EffectStoreError.isInstance(failed)).toBe(true);
    expect((failed as Error).message).toMatch(/^Could not read effect .*connection refused/);
    expect(board.count('delete')).toBe(0);
  });

  it('refuses to compensate a compensation', async () => {
    const { key, undo } = await posted();
    await undo();
    await expect(undo({ key: compensationKey(key) })).rejects.toThrow(/a compensation is not compensated/);
  });

  it('refuses a tool without compensate', async () => {
    const { key, undo } = await posted();
    const plain = defineEffectTool({ description: 'x', inputSchema: undefined as never, execute: () => 1 });
    await expect(undo({ tool: plain as unknown as EffectTool, key })).rejects.toThrow(/has no compensate/);
  });
});

describe('compensateOn as an agent setting', () => {
  it('takes failure and cancel, and refuses anything else by name', () => {
    const model = 'openai/gpt-5-mini';
    expect(defineAgent({ name: 'a', model, compensateOn: ['failure', 'cancel'] }).compensateOn).toEqual([
      'failure',
      'cancel',
    ]);
    expect(() => defineAgent({ name: 'b', model, compensateOn: ['crash' as 'failure'] })).toThrow(
      /compensateOn must be a list of 'failure' and 'cancel'/,
    );
  });
});

describe('defineEffectTool with compensation hooks', () => {
  it('refuses a compensate that is not a function', () => {
    expect(() =>
      defineEffectTool({
        description: 'x',
        inputSchema: undefined as never,
        execute: () => 1,
        compensate: 'undo' as never,
      }),
    ).toThrow(/compensate must be a function/);
  });
});
