// What the crash matrix expects of each case, and where the reliability tests leave their
// observations (read by test/reliability/report.ts). No jest import: the report runs under plain node.
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FaultPoint } from '../../src/index.js';
import type { Strategy } from './strategies.js';

export const FAULT_POINTS: FaultPoint[] = [
  'before-store-read',
  'in-already-applied',
  'before-effect',
  'after-effect',
  'before-record',
  'during-record',
];
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
    case 'before-record':
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
