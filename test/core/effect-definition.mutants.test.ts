// Behaviours of defining an effect tool and of what its execute receives and returns
// (src/effects/define-effect-tool.ts, effect-key-of.ts, effect-result.ts, step-index.ts,
// store-failure.ts) that the mutation run found unguarded (docs/reliability.md, "Mutation testing").
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { assertNoStrayHooks } from '../../src/effects/define-effect-tool.js';
import { withEffectCall } from '../../src/effects/effect-key-of.js';
import { withStepIndex } from '../../src/effects/step-index.js';
import { storeFailure } from '../../src/effects/store-failure.js';
import { defineEffectTool, effectFenceOf, effectKeyOf, stepIndex } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { EffectResultNotSerializableError, EffectStoreError, InvalidEffectToolError } from '../../src/errors/errors.js';
import { isEffectTool } from '../../src/effects/define-effect-tool.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { callOptions, makeCtx, silentLogger } from './helpers.js';

describe('defining an effect tool', () => {
  it('refuses null or a non-object with an InvalidEffectToolError that says what it expects', () => {
    for (const definition of [null, undefined, 'comment']) {
      expect(() => defineEffectTool(definition as never)).toThrow(
        new InvalidEffectToolError('defineEffectTool expects a tool definition object (the same as tool() takes).'),
      );
    }
  });

  it('isEffectTool answers false for anything that is not an object, without throwing', () => {
    for (const value of [undefined, null, 'tool', 1]) expect(isEffectTool(value)).toBe(false);
  });

  it('the stray-hook check leaves alone values that are no tool object at all (other checks name them)', () => {
    for (const value of [undefined, null, 'tool']) expect(() => assertNoStrayHooks('t', value, 'here')).not.toThrow();
  });

  it('a stray-hook refusal names the hooks in each sentence of its fix, not just the first', () => {
    const copy = { execute: () => 1, effectKey: () => 'k', alreadyApplied: () => undefined };
    expect(() => assertNoStrayHooks('copy', copy, 'here')).toThrow(
      /ignoring effectKey and alreadyApplied\. .*or drop effectKey and alreadyApplied if it has no effect to guard\.$/,
    );
  });
});

describe('what execute receives', () => {
  const key = Symbol.for('@chamvi/temporal/effect-key');
  const fence = Symbol.for('@chamvi/temporal/effect-fence');

  it('the key and the fence sit, non-enumerable, under Symbol.for names another copy of the library reads too', () => {
    const options = withEffectCall({ toolCallId: 'x' }, 'the-key', 3);
    expect((options as Record<symbol, unknown>)[key]).toBe('the-key');
    expect((options as Record<symbol, unknown>)[fence]).toBe(3);
    expect(Object.prototype.propertyIsEnumerable.call(options, key)).toBe(false);
    expect(Object.prototype.propertyIsEnumerable.call(options, fence)).toBe(false);
    // So a spread of the options (handed on to another call) does not carry this call's key.
    expect(() => effectKeyOf({ ...options })).toThrow(/carry no effect key/);
  });

  it('effectFenceOf answers undefined for anything but a number under its symbol', () => {
    expect(effectFenceOf({ [fence]: '3' })).toBeUndefined();
    expect(effectFenceOf({ [fence]: 3 })).toBe(3);
  });

  it('the step index the engine attached is read back, non-enumerable, also when another copy attached it', () => {
    const options = withStepIndex({ messages: [{ role: 'assistant' }] }, 7);
    expect(stepIndex(options)).toBe(7);
    expect(Object.prototype.propertyIsEnumerable.call(options, Symbol.for('@chamvi/temporal/step-index'))).toBe(false);
    expect(stepIndex({ messages: [], [Symbol.for('@chamvi/temporal/step-index')]: 2 })).toBe(2);
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

describe('a store failure before the effect', () => {
  it('keeps the store error as its cause', () => {
    const cause = new Error('connection refused');
    const failure = storeFailure(cause, 'k', 'read');
    expect(EffectStoreError.isInstance(failure)).toBe(true);
    expect(failure.cause).toBe(cause);
  });
});
