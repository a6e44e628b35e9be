import type { IEffectStore } from '../src/stores/effect-store.js';
import type { UnrecordedEffect } from '../common/index.js';
import { withFailureMapping } from './failures.js';

/**
 * The effect-store activities. `recordEffect` writes a record whose write failed inside the
 * effect-call activity (the effect was applied); it throws while the store is unreachable, so
 * Temporal's retry policy, not luck, makes the record durable. `put` is first-writer-wins, so a
 * record that did land meanwhile is kept.
 */
export function createEffectStoreActivities(store: IEffectStore) {
  return {
    recordEffect: (unrecorded: UnrecordedEffect): Promise<void> =>
      withFailureMapping(async () => {
        await store.put(unrecorded.key, unrecorded.record);
      }),
  };
}
