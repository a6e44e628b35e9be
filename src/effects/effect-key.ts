import { hash } from 'node:crypto';
import { InvalidEffectKeyError } from '../errors/errors.js';
import { canonicalJson } from '../json/canonical-json.js';

/**
 * Hex SHA-256 of the canonical JSON of `input`: the input fingerprint kept with each record.
 *
 * @throws UnsupportedJsonValueError as {@link defaultEffectKey} does.
 */
export function inputFingerprint(input: unknown): string {
  // crypto.hash: the one-shot form, about twice as fast as createHash for inputs this small.
  return hash('sha256', canonicalJson(input), 'hex');
}

/**
 * The key an effect tool uses when it defines no `effectKey`:
 * `<runId>:<toolName>:<sha256 hex of canonicalJson(input)>`.
 *
 * The same call with the same input in the same run maps to one key, so it is applied once; two
 * different inputs never share one, because an input canonical JSON cannot write faithfully (`NaN`,
 * a `Map`, a class instance, an `undefined` array element, ...) throws instead of being hashed in
 * its lossy JSON form. The input itself never appears in the key, only its hash.
 *
 * @throws UnsupportedJsonValueError (a `TypeError`) naming the path of such a value, of a BigInt or
 *   of a cycle (see {@link canonicalJson}); give the tool an `effectKey` to key such inputs.
 */
export function defaultEffectKey(runId: string, toolName: string, input: unknown): string {
  return `${runId}:${toolName}:${inputFingerprint(input)}`;
}

/** Checks what a custom `effectKey` returned: a non-empty string, or an {@link InvalidEffectKeyError}. */
export function assertEffectKey(toolName: string, key: unknown): string {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidEffectKeyError({ toolName, got: key });
  return key;
}
