import { InvalidEffectStoreSpecError } from '../errors/errors.js';
import { MAX_TIMEOUT_MS, msOption, RETENTION_RANGE } from '../stores/store-options.js';
import { DEFAULT_STREAM_RETENTION_MS } from './run-stream-store.js';

/**
 * Shortest poll of a waiting SQLite reader, in ms: 100 checks a second. Shorter polls cost a
 * reader's whole share of a core while it waits and show text no sooner to a person.
 */
export const MIN_SQLITE_STREAM_POLL_MS = 10;

/**
 * Shortest safety read of a waiting PostgreSQL reader, in ms. Readers wake on `NOTIFY`; the
 * safety read only bounds what a notification lost unnoticed could cost, so sub-second reads
 * buy nothing but load (a query a millisecond at 0).
 */
export const MIN_PG_STREAM_SAFETY_POLL_MS = 100;

/**
 * Longest stream table name: 55 characters. PostgreSQL cuts names at 63 bytes and `pg_notify`
 * refuses longer channels; the longest name derived from the table (`<table>_created`) must fit.
 */
export const MAX_STREAM_TABLE_LENGTH = 55;

/**
 * The `retentionMs` of a run stream store: a whole number of ms from 1 to 100 years, default
 * {@link DEFAULT_STREAM_RETENTION_MS}.
 *
 * @throws InvalidEffectStoreSpecError naming the store, the option, the value and the range.
 */
export function streamRetentionOption(store: string, value: unknown): number {
  return msOption(store, 'retentionMs', value, DEFAULT_STREAM_RETENTION_MS, RETENTION_RANGE);
}

/**
 * A poll option of a run stream store (`pollMs`, `safetyPollMs`): a whole number of ms from `min`
 * to the longest timer Node accepts.
 *
 * @throws InvalidEffectStoreSpecError naming the store, the option, the value and the range.
 */
export function streamPollOption(store: string, name: string, value: unknown, fallback: number, min: number): number {
  return msOption(store, name, value, fallback, { min, max: MAX_TIMEOUT_MS });
}

/**
 * The `table` of a run stream store, default `chamvi_stream`: 1 to {@link MAX_STREAM_TABLE_LENGTH}
 * characters of `letters` (`a-z` for PostgreSQL, whose channel names are case-sensitive while
 * unquoted table names are not; `A-Za-z` for SQLite), digits and underscores, not starting with a
 * digit.
 *
 * @throws InvalidEffectStoreSpecError naming the store, the value and the rule.
 */
export function streamTableOption(store: string, value: unknown, letters: 'a-z' | 'A-Za-z'): string {
  if (value === undefined) return 'chamvi_stream';
  const pattern = new RegExp(`^[${letters}_][${letters}0-9_]{0,${MAX_STREAM_TABLE_LENGTH - 1}}$`);
  if (typeof value === 'string' && pattern.test(value)) return value;
  const shown = typeof value === 'string' ? `"${value.slice(0, 80)}" (${value.length} characters)` : typeof value;
  throw new InvalidEffectStoreSpecError(
    `${store} option table is ${shown}; use 1 to ${MAX_STREAM_TABLE_LENGTH} characters ${letters}, 0-9 or _, not starting with a digit.`,
  );
}
