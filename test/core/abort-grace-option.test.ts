// abortGraceMs, the bound on how long a claim outlives its aborted attempt, is checked where it is
// given: a worker (chamviPlugin, createChamviActivities, hence createAgentWorker) and applyEffect
// refuse NaN (which switched the bound off: no time is `>= NaN` past the abort), negative numbers,
// Infinity and fractions with InvalidOptionError naming the option and the range.
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { createChamviActivities } from '../../activities/index.js';
import { defineEffectTool, type EffectRecord } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { InvalidOptionError } from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ClaimRequest, ClaimResult } from '../../src/stores/effect-store.js';
import { chamviPlugin } from '../../worker/chamvi-plugin.js';
import { callOptions, makeCtx, silentLogger } from './helpers.js';

const BAD: ReadonlyArray<[string, unknown]> = [
  ['NaN', NaN],
  ['-1', -1],
  ['Infinity', Infinity],
  ['1.5', 1.5],
  ['"1000" (a string)', '1000'],
];
const RANGE = /use a whole number of milliseconds from 0 to 2147483647\./;

/** A memory store that counts what is asked of it. */
class CountingStore extends MemoryEffectStore {
  asked = 0;
  override get(key: string): Promise<EffectRecord | undefined> {
    this.asked++;
    return super.get(key);
  }
  override claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    this.asked++;
    return super.claim(key, request);
  }
}

function refusal(build: () => unknown): unknown {
  try {
    build();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('abortGraceMs', () => {
  it.each(BAD)('of %s is refused when the worker plugin is created, naming the option and the range', (_, value) => {
    const error = refusal(() =>
      chamviPlugin({ agents: [], store: new MemoryEffectStore(), abortGraceMs: value as number }),
    );
    expect(InvalidOptionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^Worker option abortGraceMs is /);
    expect((error as Error).message).toMatch(RANGE);
  });

  it.each(BAD)('of %s is refused by createChamviActivities', (_, value) => {
    const error = refusal(() =>
      createChamviActivities({ agents: [], store: new MemoryEffectStore(), abortGraceMs: value as number }),
    );
    expect(InvalidOptionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(RANGE);
  });

  it('of 0 and of 2^31 - 1 (the ends of the range) is accepted', () => {
    for (const abortGraceMs of [0, 2_147_483_647]) {
      expect(() => chamviPlugin({ agents: [], store: new MemoryEffectStore(), abortGraceMs })).not.toThrow();
    }
  });

  it.each(BAD)('of %s fails applyEffect before anything is read or written: execute never runs', async (_, value) => {
    const store = new CountingStore();
    let executed = 0;
    const tool = defineEffectTool({
      inputSchema: z.object({}),
      execute: () => {
        executed++;
        return Promise.resolve('applied');
      },
    });
    const ctx = makeCtx('run-grace');
    const error = await applyEffect(
      { tool, toolName: 't', input: {}, ctx, options: callOptions(ctx) },
      { store, logger: silentLogger, abortGraceMs: value as number },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(InvalidOptionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^applyEffect option abortGraceMs is /);
    expect((error as Error).message).toMatch(RANGE);
    expect(executed).toBe(0);
    expect(store.asked).toBe(0);
  });
});
