import type {
  ClaimRequest,
  ClaimResult,
  ClaimToken,
  EffectClaims,
  EffectRecord,
  EffectRecordInput,
  FencedResult,
  IEffectStore,
} from '../../src/stores/effect-store.js';
import type { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { Network, NetworkFault } from './network.js';
import type { Prng } from './prng.js';
import type { SimProcess } from './sim-process.js';
import type { StoreLedger, StoreRequest } from './store-ledger.js';
import type { VirtualClock } from './virtual-clock.js';

/** Odds of a fault per store request, and how the faults are mixed. */
export interface StoreFaults {
  /** Probability that one request goes wrong. */
  readonly rate: number;
  /** Relative weights of the kinds of fault. */
  readonly mix: readonly (readonly [number, Exclude<NetworkFault, 'none'>])[];
}

/**
 * One simulated process's connection to the shared database: an `IEffectStore` with claims, as
 * the protocol sees a `PostgresEffectStore`. Every request crosses the {@link Network} (seeded
 * latency each way, faults, the process's death and pauses) and is applied to the one
 * `MemoryEffectStore` (whose semantics are the SQL statements', see test/stores/conformance.ts)
 * when it arrives, on the store's clock.
 *
 * A connection per process, not per attempt: the protocol shares identical calls in flight per
 * store object, so two attempts in one process share exactly as they would on one worker.
 */
export class SimStoreConnection implements IEffectStore, EffectClaims {
  constructor(
    private readonly process: SimProcess,
    private readonly model: MemoryEffectStore,
    private readonly network: Network,
    private readonly ledger: StoreLedger,
    private readonly clock: VirtualClock,
    private readonly rng: Prng,
    private readonly faults: StoreFaults,
    /** The attempt an owner token belongs to (`A2`), for the trace and the ledger. */
    private readonly actorOf: (owner: string) => string,
  ) {}

  get(key: string): Promise<EffectRecord | undefined> {
    return this.send(
      key,
      { op: 'get', by: this.process.name },
      'get',
      () => this.model.get(key),
      (r) => (r === undefined ? 'no record' : `record ${describeResult(r)}`),
    );
  }

  put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    const by = record.attempt === undefined ? this.process.name : `A${record.attempt}`;
    return this.send(
      key,
      { op: 'put', by },
      `put ${describeValue(record.result)}`,
      async () => {
        const stored = await this.model.put(key, record);
        this.ledger.onRecord(by, 'put', undefined, stored);
        return stored;
      },
      (r) => `stored ${describeResult(r)}`,
    );
  }

  claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    return this.send(
      key,
      { op: 'claim', by: this.actorOf(request.owner), owner: request.owner },
      'claim',
      async () => {
        const result = await this.model.claim(key, request);
        this.ledger.onClaim(request.owner, request.leaseMs, result);
        return result;
      },
      (r) =>
        r.status === 'acquired'
          ? `acquired (fence ${r.token.fence}${r.takeover ? ', takeover' : ''}, lease until ${Math.round(this.clock.now() + request.leaseMs)} ms)`
          : r.status === 'busy'
            ? `busy (${this.actorOf(r.owner)} holds it, ${Math.round(r.leaseRemainingMs)} ms left)`
            : `done (record ${describeResult(r.record)})`,
    );
  }

  complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult> {
    const by = this.actorOf(token.owner);
    return this.send(
      token.key,
      { op: 'complete', by, owner: token.owner },
      `complete ${describeValue(record.result)} (fence ${token.fence})`,
      async () => {
        const result = await this.model.complete(token, record);
        if (result.status === 'ok') this.ledger.onRecord(by, 'complete', token.owner, result.record);
        return result;
      },
      describeFenced,
    );
  }

  release(token: ClaimToken): Promise<FencedResult> {
    return this.send(
      token.key,
      { op: 'release', by: this.actorOf(token.owner), owner: token.owner },
      `release (fence ${token.fence})`,
      async () => {
        const result = await this.model.release(token);
        this.ledger.onRelease(token.owner, result);
        return result;
      },
      describeFenced,
    );
  }

  renew(token: ClaimToken, leaseMs: number): Promise<FencedResult> {
    return this.send(
      token.key,
      { op: 'renew', by: this.actorOf(token.owner), owner: token.owner },
      `renew (fence ${token.fence})`,
      async () => {
        const result = await this.model.renew(token, leaseMs);
        this.ledger.onRenew(token.owner, leaseMs, result);
        return result;
      },
      describeFenced,
    );
  }

  private async send<T>(
    key: string,
    request: Pick<StoreRequest, 'op' | 'by' | 'owner'>,
    label: string,
    apply: () => Promise<T>,
    describe: (result: T) => string,
  ): Promise<T> {
    const fault: NetworkFault = this.rng.chance(this.faults.rate) ? this.rng.weighted(this.faults.mix) : 'none';
    const entry: StoreRequest = { ...request, process: this.process.name, sentAt: this.clock.now(), fault };
    this.ledger.requests.push(entry);
    const who = request.by === this.process.name ? request.by : `${this.process.name}/${request.by}`;
    const delivery: { arrivedAt?: number; result?: T; answered?: 'ok' | 'error' } = {};
    try {
      return await this.network.call(
        this.process,
        who,
        `store.${label}`,
        async () => {
          const result = await apply();
          // The record, once written, must never change: look after every request that arrives.
          this.ledger.watch(await this.model.get(key));
          entry.arrivedAt = this.clock.now();
          entry.status = statusOf(result);
          return result;
        },
        fault,
        delivery,
        describe,
      );
    } finally {
      if (delivery.answered !== undefined) {
        entry.answered = delivery.answered;
        entry.answeredAt = this.clock.now();
      }
    }
  }
}

function statusOf(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const status = (result as { status?: unknown }).status;
  return typeof status === 'string' ? status : 'record';
}

function describeFenced(r: FencedResult): string {
  return r.status === 'ok' ? 'ok' : r.record === undefined ? 'lost' : `lost (record ${describeResult(r.record)})`;
}

/** A record's result as one short line. */
export function describeResult(record: EffectRecord): string {
  return `${describeValue(record.result)} ${record.origin} by A${record.attempt ?? '?'}`;
}

/** A value as one short line. */
export function describeValue(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(value);
}
