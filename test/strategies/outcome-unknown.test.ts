import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { defineEffectTool, EffectOutcomeUnknownError } from '../../src/index.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { reconcileRemote, verdict } from '../../src/strategies/index.js';
import { effectOutcomeUnknown } from '../../src/strategies/outcome-unknown.js';
import { attempt } from './crash-after-effect.js';

describe('outcome unknown is not "not applied"', () => {
  it('reconcileRemote maps the three verdicts', async () => {
    await expect(reconcileRemote('k', () => verdict.applied({ id: 1 }))).resolves.toEqual({ id: 1 });
    await expect(reconcileRemote('k', () => verdict.applied(undefined))).resolves.toBeNull();
    await expect(reconcileRemote('k', () => verdict.notApplied())).resolves.toBeUndefined();
    const unknown = await reconcileRemote('k', () => verdict.unknown('the replica lags')).catch((e: unknown) => e);
    expect(EffectOutcomeUnknownError.isInstance(unknown)).toBe(true);
    expect((unknown as Error).message).toContain('the replica lags');
  });

  it('a failing remote read becomes outcome unknown, keeping the cause', async () => {
    const cause = new Error('socket hang up');
    const error = await reconcileRemote('k', async () => {
      throw cause;
    }).catch((e: unknown) => e);
    expect(EffectOutcomeUnknownError.isInstance(error)).toBe(true);
    expect((error as Error).cause).toBe(cause);
    expect(effectOutcomeUnknown('k', 'why').retryable).toBe(true);
  });

  it('in a tool: unknown fails the call retryably, runs nothing, records nothing; once settled it reconciles', async () => {
    const remote: { applied: boolean; settled: boolean } = { applied: true, settled: false };
    let executions = 0;
    const tool = defineEffectTool({
      inputSchema: z.object({ id: z.number() }),
      alreadyApplied: (key) =>
        reconcileRemote(key, async () => {
          if (!remote.settled) return verdict.unknown('the listing may lag right after a timeout');
          return remote.applied ? verdict.applied({ ok: true }) : verdict.notApplied();
        }),
      execute: async () => {
        executions += 1;
        return { ok: true };
      },
    });
    const store = new MemoryEffectStore();
    await expect(attempt(tool, { id: 1 }, 'run-u', store)).rejects.toMatchObject({
      name: 'EffectOutcomeUnknownError',
      retryable: true,
    });
    expect(executions).toBe(0);
    remote.settled = true;
    const retry = await attempt(tool, { id: 1 }, 'run-u', store);
    expect(retry.outcome).toBe('reconciled');
    expect(executions).toBe(0);
  });
});
