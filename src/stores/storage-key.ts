import { createHash } from 'node:crypto';

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
