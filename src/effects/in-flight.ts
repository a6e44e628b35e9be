import type { IEffectStore } from '../stores/effect-store.js';

const registry = new WeakMap<IEffectStore, Map<string, Promise<unknown>>>();

/**
 * The effect calls in flight in this process against `store`, by effect key. An identical call
 * (same store, same key) that arrives while one is running shares that call's promise instead of
 * applying the effect a second time; the running call removes its entry when it settles.
 */
export function inFlightCalls(store: IEffectStore): Map<string, Promise<unknown>> {
  let calls = registry.get(store);
  if (calls === undefined) {
    calls = new Map();
    registry.set(store, calls);
  }
  return calls;
}
