// What the crash matrix expects of each case, and where the reliability tests leave their
// observations (read by test/reliability/report.ts). No jest import: the report runs under plain node.
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAULT_POINTS as ALL_FAULT_POINTS, type FaultPoint } from '../../testing/fault-injector.js';
import type { Strategy } from './strategies.js';

export const FAULT_POINTS: FaultPoint[] = [...ALL_FAULT_POINTS];
export type MatrixPoint = FaultPoint | 'no fault';
export const PG_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
export const NATS_URL = process.env['NATS_URL'] ?? '127.0.0.1:4222';

/** What the matrix expects of one case. */
export interface Expected {
  readonly count: number;
  readonly outcome: 'executed' | 'reconciled';
  readonly attempts: number;
  readonly recordPending: boolean;
  readonly note: string;
}

const RECONCILING = new Set<Strategy>(['marker', 'signed-marker', 'git-trailer']);

/**
 * The mechanism a crash case stands for, in its test name: the case fails when that mechanism is
 * removed (alreadyApplied, the remote's dedupe by key, the later record). The cases before the
 * effect and the baseline guard no single mechanism: they show that a crash before the effect
 * applies nothing and the retry applies it once.
 */
export function guardOf(strategy: Strategy, point: MatrixPoint): string {
  switch (point) {
    case 'no fault':
      return 'baseline';
    case 'before-store-read':
    case 'in-already-applied':
    case 'before-effect':
      return 'nothing applied before the crash, the retry applies once';
    case 'after-effect':
      if (strategy === 'none') return 'documents the crash window (no strategy)';
      if (RECONCILING.has(strategy)) return 'guards alreadyApplied';
      return strategy === 'idempotency-key'
        ? 'guards the remote dedupe by Idempotency-Key'
        : 'guards the remote dedupe by Nats-Msg-Id';
    case 'before-record':
    case 'during-record':
      return 'guards the later record (chamvi.recordEffect)';
  }
}

/**
 * Where a zombie attempt stalls, past its start-to-close timeout, while the retry runs on the
 * other worker: after its remote read and last check, right before `execute` (the stale read:
 * alreadyApplied said "not applied"), and after the effect, before `execute` returns.
 */
export const ZOMBIE_POINTS = ['before-effect', 'after-effect'] as const;
export type ZombiePoint = (typeof ZOMBIE_POINTS)[number];

/** What a zombie case expects: `storedOrigin` is the origin of the record the retry was answered with. */
export interface ExpectedZombie {
  readonly count: number;
  readonly outcome: 'executed' | 'recorded';
  /** The retry that answered is attempt 2 or later (it may have waited out one busy wait). */
  readonly minAttempts: number;
  readonly storedOrigin: 'executed';
  /** The mechanism the case stands for; it fails when that is removed. */
  readonly guard: string;
  readonly note: string;
}

/** The documented behaviour of each zombie case. */
export function expectedZombie(strategy: Strategy, point: ZombiePoint): ExpectedZombie {
  if (point === 'before-effect' && strategy === 'idempotency-key') {
    // The ticket tool passes ctx.run.signal to fetch: the zombie's request is aborted, it applies
    // nothing and gives the key back, and the waiting retry applies it (claims or not).
    return {
      count: 1,
      outcome: 'executed',
      minAttempts: 2,
      storedOrigin: 'executed',
      guard: 'guards execute honouring its aborted signal (claims or not)',
      note: "the zombie's request is aborted; the retry applies once",
    };
  }
  // Without the claim the retry would apply beside the zombie (none, markers: 2 effects) or
  // answer from the remote (alreadyApplied, a replayed key): never "recorded".
  return {
    count: 1,
    outcome: 'recorded',
    minAttempts: 2,
    storedOrigin: 'executed',
    guard: 'guards the claim, kept past the lease while execute runs',
    note: "the retry waits for the zombie's claim and takes its record",
  };
}

/** The documented behaviour of each case. */
export function expected(strategy: Strategy, point: MatrixPoint): Expected {
  switch (point) {
    case 'no fault':
      return { count: 1, outcome: 'executed', attempts: 1, recordPending: false, note: 'baseline' };
    case 'before-store-read':
    case 'in-already-applied':
    case 'before-effect':
      return {
        count: 1,
        outcome: 'executed',
        attempts: 2,
        recordPending: false,
        note: 'nothing applied before the crash; the retry applies',
      };
    case 'after-effect':
      if (strategy === 'none') {
        return {
          count: 2,
          outcome: 'executed',
          attempts: 2,
          recordPending: false,
          note: 'DOCUMENTED DUPLICATE: no strategy closes the crash window',
        };
      }
      if (RECONCILING.has(strategy)) {
        return {
          count: 1,
          outcome: 'reconciled',
          attempts: 2,
          recordPending: false,
          note: 'the retry finds the effect through alreadyApplied',
        };
      }
      return {
        count: 1,
        outcome: 'executed',
        attempts: 2,
        recordPending: false,
        note: 'the retry re-sends; the remote dedupes by key',
      };
    // A throw around the store's record write is a failed write (before it is sent, or with its
    // answer lost): the protocol survives it, and the later record is what the case guards.
    case 'before-record':
    case 'during-record':
      return {
        count: 1,
        outcome: 'executed',
        attempts: 1,
        recordPending: true,
        note: 'call succeeds; chamvi.recordEffect records later',
      };
  }
}

/** One observed case. */
export interface Observation {
  readonly topology: string;
  readonly strategy: Strategy;
  readonly point: MatrixPoint;
  readonly count: number;
  readonly outcome: string;
  readonly attempts: number;
  readonly recordPending: boolean;
  readonly storedOrigin: string | undefined;
  readonly recordEffectActivities: number;
  /** The run's activities: type#attempt status (failure). */
  readonly history: string;
}

/** Where matrix observations are written, for docs/reliability.md (`npx tsx scripts/reliability-table.ts`). */
export const RESULTS_DIR = process.env['CHAMVI_RELIABILITY_RESULTS'] ?? join(tmpdir(), 'chamvi-reliability');

export function writeObservations(file: string, rows: readonly unknown[]): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${file}.json`), JSON.stringify(rows, null, 2));
}
