import { ACTIVITY_NAMES } from '../common/activity-names.js';
import {
  hasClaims,
  type ClaimRequest,
  type ClaimToken,
  type EffectRecordInput,
  type IEffectStore,
} from '../src/stores/effect-store.js';
import { currentActivity } from './activity-attempt.js';
import type { FaultHit, FaultPoint, SeenCall } from './fault-injector.js';

/** What the store wrapper needs of its injector. */
export interface StoreFaultSink {
  strike(hit: FaultHit): Promise<void>;
  /** The call a wrapped tool made with this key, if any. */
  seen(key: string): SeenCall | undefined;
}

/**
 * The store behind a Proxy that strikes the store points of the effect protocol:
 * `before-store-read` before `claim` (or `get`, on a store without claims), `before-record` before
 * `complete` or `put`, `during-record` after the store applied them and before the answer is
 * returned. Only for keys the wrapped tools used, and never in the `chamvi.recordEffect` activity.
 * Everything else goes to the store itself, with the store as `this`.
 */
export function withFaultyStore<STORE extends IEffectStore>(store: STORE, sink: StoreFaultSink): STORE {
  const claims = hasClaims(store);

  const hitFor = (point: FaultPoint, key: string, attempt?: number): FaultHit | undefined => {
    const activity = currentActivity();
    if (activity !== undefined && activity.type !== ACTIVITY_NAMES.effectCall) return undefined;
    const call = sink.seen(key);
    if (call === undefined) return undefined;
    const known = activity?.attempt ?? attempt ?? call.attempt;
    return {
      point,
      key,
      toolName: call.toolName,
      ctx: call.ctx,
      toolInput: call.toolInput,
      ...(known !== undefined ? { attempt: known } : {}),
    };
  };
  const strike = async (point: FaultPoint, key: string, attempt?: number): Promise<void> => {
    const hit = hitFor(point, key, attempt);
    if (hit !== undefined) await sink.strike(hit);
  };
  // The record write: before-record before it is sent, during-record once the store applied it.
  const recording = async <T>(key: string, write: () => Promise<T>): Promise<T> => {
    await strike('before-record', key);
    const answer = await write();
    await strike('during-record', key);
    return answer;
  };

  const wrapped: Partial<Record<string, unknown>> = {
    get: async (key: string) => {
      if (!claims) await strike('before-store-read', key);
      return store.get(key);
    },
    put: (key: string, record: EffectRecordInput) => recording(key, () => store.put(key, record)),
  };
  if (claims) {
    wrapped['claim'] = async (key: string, request: ClaimRequest) => {
      await strike('before-store-read', key, request.attempt);
      return store.claim(key, request);
    };
    wrapped['complete'] = (token: ClaimToken, record: EffectRecordInput) =>
      recording(token.key, () => store.complete(token, record));
  }
  return new Proxy(store, {
    get(target, property, receiver) {
      if (typeof property === 'string' && wrapped[property] !== undefined) return wrapped[property];
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
