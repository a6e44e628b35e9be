import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { defineEffectTool, type IEffectStore } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { EffectResultNotSerializableError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { SqliteEffectStore } from '../../src/stores/sqlite-effect-store.js';
import { callOptions, makeCtx, PlainStore, silentLogger } from './helpers.js';

// The "applied, but its result cannot be serialised" mark lives beside the record (its own field,
// its own column), never inside the result, so no value an execute returns can be mistaken for it.

const stores: Array<[string, () => IEffectStore & { close?(): Promise<void> }]> = [
  ['memory', () => new MemoryEffectStore()],
  ['SQLite', () => new SqliteEffectStore(':memory:')],
  ['a plain get/put store', () => new PlainStore()],
];

function counted(result: () => unknown) {
  let runs = 0;
  const tool = defineEffectTool({
    inputSchema: z.object({ id: z.string() }),
    effectKey: ({ id }) => `run-1:effect:${id}`,
    execute: async () => {
      runs++;
      return result();
    },
  });
  const ctx = makeCtx('run-1');
  const call = (store: IEffectStore) =>
    applyEffect(
      { tool, toolName: 'effect', input: { id: 'a' }, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );
  return { call, runs: () => runs };
}

describe.each(stores)('the unserialisable mark on the %s store', (_, open) => {
  it('an execute returning { $chamviUnserializableResult: "x" } is recorded and returned as is, also to later calls', async () => {
    const store = open();
    const shaped = { $chamviUnserializableResult: 'x' };
    const { call, runs } = counted(() => shaped);
    const first = await call(store);
    expect(first.result).toEqual(shaped);
    expect(first.report.outcome).toBe('executed');
    const again = await call(store);
    expect(again.result).toEqual(shaped);
    expect(again.report.outcome).toBe('recorded');
    expect(runs()).toBe(1);
    const record = await store.get('run-1:effect:a');
    expect(record?.result).toEqual(shaped);
    expect(record?.unserializable).toBeUndefined();
    await store.close?.();
  });

  it('an execute whose result cannot be serialised runs once; the key is marked done out of band and every later call throws', async () => {
    const store = open();
    const { call, runs } = counted(() => ({ id: 'a', big: 10n }));
    await expect(call(store)).rejects.toThrow(EffectResultNotSerializableError);
    const later = call(store);
    await expect(later).rejects.toThrow(EffectResultNotSerializableError);
    await expect(later).rejects.toThrow('cannot be serialised as JSON (BigInt at $.big');
    expect(runs()).toBe(1);
    const record = await store.get('run-1:effect:a');
    expect(record).toMatchObject({ unserializable: expect.stringContaining('BigInt at $.big'), resultUndefined: true });
    expect(record?.result).toBeUndefined();
    await store.close?.();
  });
});

describe('what execute returns', () => {
  const run = async (execute: () => unknown) => {
    const ctx = makeCtx('r');
    const t = defineEffectTool({ inputSchema: z.object({}), execute: execute as () => string });
    const store = new MemoryEffectStore();
    const { result, report } = await applyEffect(
      { tool: t, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger },
    );
    return { result, record: await store.get(report.key) };
  };

  it('a synchronous execute may return undefined or null', async () => {
    await expect(run(() => undefined)).resolves.toMatchObject({
      result: undefined,
      record: { resultUndefined: true },
    });
    await expect(run(() => null)).resolves.toMatchObject({ result: null, record: { result: null } });
  });

  it('a streaming execute without a chunk listener records its last value', async () => {
    const chunks = async function* () {
      yield 'draft';
      yield 'final';
    };
    await expect(run(chunks)).resolves.toMatchObject({ result: 'final', record: { result: 'final' } });
  });

  it("an unserialisable result's reason names what JSON cannot hold, not a value JSON writes lossily", async () => {
    const error = await run(() => ({ a: NaN, b: 1n })).catch((e: unknown) => e);
    expect(EffectResultNotSerializableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/BigInt at \$\.b/);
    expect((error as Error).message).not.toMatch(/NaN/);
  });
});
