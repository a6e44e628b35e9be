import type { IEffectStore } from '../src/stores/effect-store.js';
import type { UnrecordedEffect } from '../common/index.js';

/**
 * The effect-store activities. `recordEffect` writes a record whose write failed inside the
 * effect-call activity (the effect was applied); it throws while the store is unreachable, so
 * Temporal's retry policy, not luck, makes the record durable. `put` is first-writer-wins, so a
 * record that did land meanwhile is kept. `lookupEffect` reads a key, for custom workflows.
 */
export function createEffectStoreActivities(store: IEffectStore) {
  return {
    recordEffect: async (unrecorded: UnrecordedEffect): Promise<void> => {
      await store.put(unrecorded.key, unrecorded.record);
    },
    lookupEffect: async (key: string): Promise<{ found: boolean; result?: unknown; origin?: string }> => {
      const record = await store.get(key);
      if (record === undefined) return { found: false };
      return { found: true, result: record.result, origin: record.origin };
    },
  };
}
