import type { RunStreamKey } from '../../src/stream/run-stream-store.js';
import type { FaultyStreamStore } from './faulty-stream-store.js';
import type { StreamBackend } from './stream-backend.js';
import type { StreamLedger } from './stream-ledger.js';
import type { StreamScenario } from './stream-scenario.js';
import type { Trace } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

/**
 * The reason readers and pages are stopped with: one shared value, because the default reason (a
 * new DOMException, stack and all) is a large part of a stream history's cost.
 */
export const PAGE_CLOSED = Object.freeze({ reason: 'the page closed' });

/** How long one step attempt's `RunStreamWriter.close` took (the stream's share of the step's latency). */
export interface CloseTiming {
  readonly who: string;
  readonly startedAt: number;
  endedAt?: number;
  /** Warnings the writer gave (one at most: a stream that cannot keep up is dropped with one). */
  warnings: number;
}

/** What a workflow of the history did, for the judge; also its stream's key. */
export interface WorkflowRecord extends RunStreamKey {
  readonly name: string;
  /** When its first execution starts, virtual ms. */
  readonly startedAt: number;
  /** Its executions, in order (the first, then a reset's or a continue-as-new's). */
  readonly executions: string[];
  /** When each execution started, virtual ms (a reset's: the reset), as describe of that run tells it. */
  readonly executionStarts: Map<string, number>;
  /** The attempts Temporal took (their result is the step's), as `W1/E1/s0/a2`. */
  readonly taken: Set<string>;
  /** The workflow's status as describe names it (`RUNNING` until its last execution ends). */
  status: 'RUNNING' | 'COMPLETED' | 'FAILED';
}

/** Everything of one stream history that its parts share. */
export interface StreamWorld {
  readonly scenario: StreamScenario;
  readonly clock: VirtualClock;
  readonly trace: Trace;
  readonly backend: StreamBackend;
  /** The writers' and readers' connection (faults on appends). */
  readonly store: FaultyStreamStore;
  readonly ledger: StreamLedger;
  readonly closes: CloseTiming[];
  readonly workflows: WorkflowRecord[];
  /** Pages whose duplicates a documented cause explains, by cause. */
  readonly documented: Record<string, number>;
  /** The budget a step's close may take, in ms (the documented one). */
  readonly budgetMs: number;
  /** When the store was closed (a shutdown), if it was. */
  closedAt: number | undefined;
  /** Whether every writer has settled (readers then read what is left and end). */
  writersDone(): boolean;
  /** Aborts when the history ends (readers still following stop). */
  readonly ended: AbortSignal;
  /** Work still running: the history ends when all of it settles. */
  track(work: Promise<unknown>, writer?: boolean): void;
}
