import type {
  ClaimRequest,
  ClaimResult,
  ClaimToken,
  EffectClaims,
  EffectRecord,
  EffectRecordInput,
  FencedResult,
  IEffectStore,
} from '../src/stores/effect-store.js';
import { hasClaims } from '../src/stores/effect-store.js';
import { hasConversationStore, type ConversationStore } from '../src/stores/conversation-store.js';

/** Store operations a {@link FlakyEffectStore} can fail. @public */
export type StoreOperation = 'get' | 'put' | 'claim' | 'complete' | 'release' | 'renew';

/** What fails: the next N calls of each operation, and/or each call with a probability. @public */
export interface FlakyStoreOptions {
  /** Fail the next N calls of these operations, e.g. `{ claim: 1 }` (a claim store's read of the key). */
  readonly failNext?: Partial<Record<StoreOperation, number>>;
  /** Fail every call of these operations with this probability (store hiccups in a soak). */
  readonly probability?: Partial<Record<StoreOperation, number>>;
}

/** The error a {@link FlakyEffectStore} throws. @public */
export class StoreHiccup extends Error {
  constructor(
    /** The store operation that failed. */
    readonly operation: StoreOperation,
  ) {
    super(`injected store hiccup in ${operation}`);
    this.name = 'StoreHiccup';
  }
}

/**
 * Wraps an effect store so that chosen operations fail (a connection reset, a failover), for
 * tests of "the store read fails" (the call fails closed, nothing is executed) and "the store
 * write fails" (the call succeeds, the effect-store activity records later). Keeps the claims of
 * the wrapped store. `failures` counts what failed.
 * @public
 */
export class FlakyEffectStore implements IEffectStore, EffectClaims {
  /** How many calls of each operation it has failed so far. */
  readonly failures: Record<StoreOperation, number> = { get: 0, put: 0, claim: 0, complete: 0, release: 0, renew: 0 };
  private readonly next: Partial<Record<StoreOperation, number>>;

  constructor(
    /** The store it wraps. */
    readonly inner: IEffectStore,
    private readonly options: FlakyStoreOptions = {},
  ) {
    this.next = { ...options.failNext };
    if (!hasClaims(inner)) {
      // Without claims, present none: the protocol then uses get/put only.
      for (const op of ['claim', 'complete', 'release', 'renew'] as const)
        (this as Record<string, unknown>)[op] = undefined;
    }
    // Run conversations and offloaded payloads pass through untouched (workers sharing the wrapped
    // store share them): only the effect store's own operations fail here.
    if (hasConversationStore(inner)) {
      const conversation: ConversationStore = inner;
      Object.assign(this, {
        appendConversation: conversation.appendConversation.bind(inner),
        loadConversation: conversation.loadConversation.bind(inner),
        putPayload: conversation.putPayload.bind(inner),
        getPayload: conversation.getPayload.bind(inner),
        ...(conversation.inProcessOnly === true ? { inProcessOnly: true } : {}),
      });
    }
  }

  /** Fails the next `times` calls of `operation`. */
  failNext(operation: StoreOperation, times = 1): this {
    this.next[operation] = (this.next[operation] ?? 0) + times;
    return this;
  }

  /** {@inheritDoc IEffectStore.get} */
  get(key: string): Promise<EffectRecord | undefined> {
    return this.call('get', () => this.inner.get(key));
  }
  /** {@inheritDoc IEffectStore.put} */
  put(key: string, record: EffectRecordInput): Promise<EffectRecord | void> {
    return this.call('put', () => this.inner.put(key, record));
  }
  /** {@inheritDoc EffectClaims.claim} */
  claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    return this.call('claim', () => this.claims().claim(key, request));
  }
  /** {@inheritDoc EffectClaims.complete} */
  complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult> {
    return this.call('complete', () => this.claims().complete(token, record));
  }
  /** {@inheritDoc EffectClaims.release} */
  release(token: ClaimToken): Promise<FencedResult> {
    return this.call('release', () => this.claims().release(token));
  }
  /** {@inheritDoc EffectClaims.renew} */
  renew(token: ClaimToken, leaseMs: number): Promise<FencedResult> {
    return this.call('renew', () => this.claims().renew(token, leaseMs));
  }

  private claims(): EffectClaims {
    return this.inner as unknown as EffectClaims;
  }

  private async call<T>(operation: StoreOperation, run: () => Promise<T>): Promise<T> {
    const planned = this.next[operation] ?? 0;
    const p = this.options.probability?.[operation] ?? 0;
    if (planned > 0 || (p > 0 && Math.random() < p)) {
      if (planned > 0) this.next[operation] = planned - 1;
      this.failures[operation] += 1;
      throw new StoreHiccup(operation);
    }
    return run();
  }
}
