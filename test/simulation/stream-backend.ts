import type { DatabaseSync } from 'node:sqlite';
import { MemoryRunStreamStore } from '../../src/stream/memory-run-stream.js';
import type { RunStreamBatch, RunStreamKey, RunStreamStore } from '../../src/stream/run-stream-store.js';
import { SqliteRunStreamStore } from '../../src/stream/sqlite-run-stream.js';
import type { StoreClock } from './conversation-backend.js';

/** A real run stream store under a simulated history, and what the database holds (read behind the store's back). */
export interface StreamBackend {
  readonly kind: 'memory' | 'sqlite';
  readonly store: RunStreamStore;
  /** Every batch of stream `key` stored now, in cursor order (none once the store is closed). */
  stored(key: RunStreamKey): Promise<RunStreamBatch[]>;
}

/**
 * How often an SQLite reader polls, in ms: rarely, because the simulation's readers share the
 * store object with the writers (an append through it wakes them at once) and every poll is a
 * timer the virtual clock must fire.
 */
const SQLITE_POLL_MS = 15_000;

export async function openStreamBackend(
  kind: 'memory' | 'sqlite',
  retentionMs: number,
  now: StoreClock,
): Promise<StreamBackend> {
  if (kind === 'memory') {
    const store = new MemoryRunStreamStore({ retentionMs });
    return { kind, store, stored: (key) => store.read(key, 0, 1_000_000).catch(() => []) };
  }
  const store = new SqliteRunStreamStore(':memory:', { retentionMs, pollMs: SQLITE_POLL_MS });
  await store.read({ runId: 'open', workflowId: 'open', firstExecutionRunId: 'open' }, 0); // opens the database: its clock can then be replaced
  const db = (store as unknown as { db: DatabaseSync }).db;
  // SQLITE_NOW_MS is julianday('now'): the database's clock becomes the virtual one.
  db.function('julianday', { varargs: true, deterministic: false }, () => now() / 86_400_000 + 2_440_587.5);
  return { kind, store, stored: (key) => store.read(key, 0, 1_000_000).catch(() => []) };
}
