import { createHash } from 'node:crypto';
import { EffectKeyNotStorableError } from '../errors/errors.js';

/**
 * Longest effect key, in UTF-8 bytes, that the durable stores use verbatim as their primary key:
 * 512. Longer keys are stored under {@link HASHED_KEY_PREFIX} plus their SHA-256 (71 bytes), so
 * any key length works and the primary-key index stays small. PostgreSQL's B-tree cannot index a
 * value beyond about 2.7 kB at all, so a limit is needed; 512 bytes covers every key this library
 * builds (`<runId>:<tool>:<64 hex>`) with room for custom ones, while hashing keeps long custom
 * keys working instead of rejecting them.
 */
export const MAX_PLAIN_KEY_BYTES = 512;

/** Prefix of hashed primary keys. Keys that start with it are hashed too, so the two forms never collide. */
export const HASHED_KEY_PREFIX = '#sha256:';

/**
 * The primary key a durable store files `key` under: the key itself when it is at most
 * {@link MAX_PLAIN_KEY_BYTES} UTF-8 bytes, else `#sha256:<hex of its SHA-256>`. Stores keep the
 * full key beside it and compare it on every read and write, so a hash collision cannot return
 * another key's record.
 */
export function storageKey(key: string): string {
  if (Buffer.byteLength(key, 'utf8') <= MAX_PLAIN_KEY_BYTES && !key.startsWith(HASHED_KEY_PREFIX)) return key;
  return HASHED_KEY_PREFIX + createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Whether {@link storageKey} hashes `key`. */
export function isHashedKey(key: string): boolean {
  return storageKey(key) !== key;
}

/**
 * Upper bound for a prefix range scan over plain primary keys: every string that starts with
 * `prefix` sorts (bytewise, i.e. in the C collation) at or below it, except keys that continue
 * with U+10FFFF itself, which no key builder produces.
 */
export function prefixUpperBound(prefix: string): string {
  return prefix + String.fromCodePoint(0x10ffff);
}

/**
 * Refuses a key (or a text field of a record or claim) that a store cannot keep as given: one with
 * a NUL character (U+0000). PostgreSQL text cannot hold NUL at all, and SQLite's text functions stop
 * at it, so every store refuses it alike, before anything is written: a key that works on the
 * memory store in a test must not fail only in production.
 *
 * @throws EffectKeyNotStorableError naming the field and the key (NUL shown as `\u0000`).
 */
export function checkStorable(key: string, field = 'key', value: unknown = key): void {
  if (typeof value !== 'string' || !value.includes('\u0000')) return;
  const shown = JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
  const what =
    field === 'key'
      ? `Effect key ${shown}`
      : field === 'prefix'
        ? `Key prefix ${shown}`
        : `The ${field} of effect ${shown}`;
  throw new EffectKeyNotStorableError(
    `${what} contains a NUL character (U+0000), which effect stores cannot keep (PostgreSQL text cannot hold it); nothing was written and nothing was applied. Build the key without NUL: fix effectKey, or the run id or tool name the default key is made of.`,
  );
}

/** {@link checkStorable} for a key and the text fields of what is written with it (a record, a claim request). */
export function checkStorableFields(
  key: string,
  fields: {
    readonly toolName?: unknown;
    readonly runId?: unknown;
    readonly fingerprint?: unknown;
    readonly owner?: unknown;
  },
): void {
  checkStorable(key);
  checkStorable(key, 'tool name', fields.toolName);
  checkStorable(key, 'run id', fields.runId);
  checkStorable(key, 'fingerprint', fields.fingerprint);
  checkStorable(key, 'owner token', fields.owner);
}
