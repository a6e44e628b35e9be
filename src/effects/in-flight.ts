import type { IEffectStore } from '../stores/effect-store.js';

const registry = new WeakMap<IEffectStore, Map<string, Promise<unknown>>>();

/**
 * Runs `apply` for `key` unless a call with the same key is already in flight on the same store
 * in this process; then it shares that call's promise. `shared` tells the caller which happened.
 */
export async function shareInFlight<T>(
  store: IEffectStore,
  key: string,
  apply: () => Promise<T>,
): Promise<{ value: T; shared: boolean }> {
  let calls = registry.get(store);
  if (calls === undefined) {
    calls = new Map();
    registry.set(store, calls);
  }
  const running = calls.get(key) as Promise<T> | undefined;
  if (running !== undefined) return { value: await running, shared: true };
  const promise = apply();
  calls.set(key, promise);
  try {
    return { value: await promise, shared: false };
  } finally {
    calls.delete(key);
  }
}
