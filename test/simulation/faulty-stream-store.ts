import type {
  RunStreamBatch,
  RunStreamKey,
  RunStreamPart,
  RunStreamStore,
  RunStreamWriterRef,
} from '../../src/stream/run-stream-store.js';
import type { Prng } from './prng.js';
import { streamOf, type StreamLedger } from './stream-ledger.js';
import type { StreamStoreHealth } from './stream-scenario.js';
import type { Trace } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

/** Waits for one run and cursor at one virtual instant past which a reader counts as spinning. */
const SPIN_LIMIT = 1000;

/** Thrown to a reader that waits for a batch again and again without time passing (a busy loop). */
export class SpinningReaderError extends Error {
  constructor(runId: string, after: unknown) {
    super(
      `the reader of ${runId} waited ${SPIN_LIMIT} times at one instant after cursor ${String(after)}: each wait answered at once and each read found nothing (a busy loop that never yields)`,
    );
    this.name = 'SpinningReaderError';
  }
}

/** What happens to one append on its way to the store and back. */
type Fault = 'none' | 'slow' | 'stall' | 'fail' | 'late-answer' | 'lost-answer';

/**
 * The workers' connection to a real run stream store, with the faults of a real network and
 * database: appends that are slow, held forever (a black-holed database), refused, committed with
 * an answer that comes late or never, or committed with the answer lost (the writer sends the parts
 * again). Reads and waits go straight through. Every commit is written to the ledger. `teardown`
 * fails whatever is still held, so that nothing of the history outlives it.
 */
export class FaultyStreamStore implements RunStreamStore {
  private readonly held = new Set<(error: Error) => void>();
  private spin: { at: number; counts: Map<string, number> } = { at: -1, counts: new Map() };

  constructor(
    private readonly inner: RunStreamStore,
    private readonly clock: VirtualClock,
    private readonly rng: Prng,
    private readonly health: StreamStoreHealth,
    private readonly ledger: StreamLedger,
    private readonly trace: Trace,
  ) {}

  append(ref: RunStreamWriterRef, parts: readonly RunStreamPart[]): Promise<number> {
    const now = this.clock.now();
    const hole = this.health.blackHoles.find((h) => h.from <= now && now < h.until);
    const fault: Fault = hole !== undefined ? 'stall' : this.draw();
    const who = `${ref.execution}/s${ref.step}/a${ref.attempt}`;
    // The writer never changes a batch it handed over (a retry sends a new array), so no deep copy.
    const copy = [...parts];
    return new Promise<number>((resolve, reject) => {
      let settled = false;
      const fail = (error: Error): void => {
        if (settled) return;
        settled = true;
        this.held.delete(fail);
        reject(error);
      };
      const answer = (cursor: number): void => {
        if (settled) return;
        settled = true;
        this.held.delete(fail);
        resolve(cursor);
      };
      this.held.add(fail);
      const commit = async (): Promise<number> => {
        const cursor = await this.inner.append(ref, copy);
        const batch = this.ledger.commit(ref, copy, cursor, this.clock.now(), fault === 'lost-answer');
        this.trace.log(who, `batch committed: cursor ${cursor}, ${batch.tokens.length} parts (#${batch.index})`);
        return cursor;
      };
      const after = (ms: number, then: () => void): void => this.clock.at(this.clock.now() + ms, then);
      const latency = this.rng.int(1, 20);
      const failed = (what: string) => (): void => fail(new Error(`simulated stream store: ${what}`));
      switch (fault) {
        case 'none':
          return after(latency, () => void commit().then(answer, fail));
        case 'slow':
          return after(this.rng.int(200, 6000), () => void commit().then(answer, fail));
        case 'stall':
          if (hole?.released === true) after(hole.until - now, () => void commit().then(answer, fail));
          return;
        case 'fail':
          return after(latency, failed('connection refused'));
        case 'late-answer': {
          const late = this.rng.chance(0.3) ? undefined : this.rng.int(2000, 60_000);
          return after(latency, () => {
            void commit().then((cursor) => {
              if (late !== undefined) after(late, () => answer(cursor));
            }, fail);
          });
        }
        case 'lost-answer':
          return after(latency, () => void commit().then(failed('connection reset after the commit'), fail));
      }
    });
  }

  read(key: RunStreamKey, after: number, limit?: number): Promise<RunStreamBatch[]> {
    return this.inner.read(key, after, limit);
  }

  /**
   * Passed through, guarded: a reader that waits again and again without time passing (the wait
   * answers at once, the read finds nothing) would spin on promise callbacks forever and freeze
   * the simulator as it freezes a process. Past {@link SPIN_LIMIT} waits at one virtual instant
   * for one run and cursor, the wait throws {@link SpinningReaderError} instead.
   */
  waitForAppend(key: RunStreamKey, after: number, signal?: AbortSignal): Promise<void> {
    const at = this.clock.now();
    const id = `${streamOf(key)}\n${String(after)}`;
    if (this.spin.at !== at) this.spin = { at, counts: new Map() };
    const n = (this.spin.counts.get(id) ?? 0) + 1;
    this.spin.counts.set(id, n);
    if (n > SPIN_LIMIT) return Promise.reject(new SpinningReaderError(key.runId, after));
    return this.inner.waitForAppend(key, after, signal);
  }

  prune(): Promise<number> {
    return this.inner.prune();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Fails every append still held. */
  teardown(): void {
    for (const fail of [...this.held]) fail(new Error('simulated stream store: the history ended'));
  }

  private draw(): Fault {
    if (!this.rng.chance(this.health.faultRate)) return 'none';
    return this.rng.weighted([
      [4, 'slow'],
      [2, 'stall'],
      [3, 'fail'],
      [2, 'late-answer'],
      [1, 'lost-answer'],
    ] as const);
  }
}
