// The smallest effect store: get and put, first writer wins. It has no claims (two attempts of
// one key may run side by side, and only alreadyApplied tells a retry what the other did) and no
// conversations (the worker keeps those in its own memory), so it serves one worker process.
import type { EffectRecord, EffectRecordInput, IEffectStore } from '@chamvi/temporal/stores';

export class MapEffectStore implements IEffectStore {
  readonly #records = new Map<string, EffectRecord>();

  get(key: string): Promise<EffectRecord | undefined> {
    return Promise.resolve(this.#records.get(key));
  }

  put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    const stored = this.#records.get(key) ?? { ...record, key, recordedAt: new Date().toISOString() };
    this.#records.set(key, stored);
    return Promise.resolve(stored);
  }
}
