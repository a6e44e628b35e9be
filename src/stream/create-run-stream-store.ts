import { parseStoreSpec } from '../stores/store-spec.js';
import { MemoryRunStreamStore } from './memory-run-stream.js';
import { PostgresRunStreamStore } from './postgres-run-stream.js';
import type { RunStreamStore } from './run-stream-store.js';
import {
  MIN_PG_STREAM_SAFETY_POLL_MS,
  MIN_SQLITE_STREAM_POLL_MS,
  streamPollOption,
  streamTableOption,
} from './run-stream-options.js';
import { SqliteRunStreamStore } from './sqlite-run-stream.js';

/** What {@link createRunStreamStore} takes besides the spec. @beta @experimental */
export interface CreateRunStreamStoreOptions {
  /**
   * Table of the batches (and `<table>_head`, each stream's last cursor; PostgreSQL's `LISTEN`
   * channel). Default `chamvi_stream`: 1 to 55 letters (lowercase for PostgreSQL), digits or
   * underscores, not starting with a digit.
   */
  readonly table?: string;
  /** How long a batch is kept, in ms: 1 to 100 years. Default 7 days. */
  readonly retentionMs?: number;
  /** SQLite: how often a waiting reader polls, in ms: 10 to 2^31 - 1. Default 50. */
  readonly pollMs?: number;
  /** PostgreSQL: the safety read of a waiting reader without notifications, in ms: 100 to 2^31 - 1. Default 30 000. */
  readonly safetyPollMs?: number;
}

/**
 * Opens a run stream store from a spec, in the forms of effect store specs (it may be the same
 * spec as the workers' effect store: the stream has its own table):
 * `postgres://…` → {@link PostgresRunStreamStore} (readers wake on `LISTEN/NOTIFY`), an SQLite
 * path or `sqlite:` URL → {@link SqliteRunStreamStore} (readers poll), `memory:` →
 * {@link MemoryRunStreamStore} (this process only). Nothing is opened before first use.
 *
 * @throws InvalidEffectStoreSpecError for a malformed spec, or an option outside its range (the
 *   message names the option and the range).
 * @beta @experimental
 */
export function createRunStreamStore(spec: string, options: CreateRunStreamStoreOptions = {}): RunStreamStore {
  const parsed = parseStoreSpec(spec);
  // Checked whatever the spec: an option the chosen store ignores is still refused when out of range.
  const name = 'createRunStreamStore';
  streamPollOption(name, 'pollMs', options.pollMs, MIN_SQLITE_STREAM_POLL_MS, MIN_SQLITE_STREAM_POLL_MS);
  streamPollOption(
    name,
    'safetyPollMs',
    options.safetyPollMs,
    MIN_PG_STREAM_SAFETY_POLL_MS,
    MIN_PG_STREAM_SAFETY_POLL_MS,
  );
  streamTableOption(name, options.table, parsed.kind === 'postgres' ? 'a-z' : 'A-Za-z');
  const common = {
    ...(options.table !== undefined ? { table: options.table } : {}),
    ...(options.retentionMs !== undefined ? { retentionMs: options.retentionMs } : {}),
  };
  switch (parsed.kind) {
    case 'memory':
      return new MemoryRunStreamStore(common);
    case 'sqlite':
      return new SqliteRunStreamStore(parsed.path, {
        ...common,
        ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
      });
    case 'postgres':
      return new PostgresRunStreamStore(parsed.url, {
        ...common,
        ...(options.safetyPollMs !== undefined ? { safetyPollMs: options.safetyPollMs } : {}),
      });
  }
}
