import { hash } from 'node:crypto';
import { InvalidEffectKeyError } from '../errors/errors.js';
import { canonicalJson } from '../json/canonical-json.js';
import type { EffectCall } from './effect-protocol.js';

/**
 * Hex SHA-256 of the canonical JSON of `input`: the input fingerprint kept with each record.
 *
 * @throws UnsupportedJsonValueError as {@link defaultEffectKey} does.
 * @public
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
 * @public
 */
export function defaultEffectKey(runId: string, toolName: string, input: unknown): string {
  return defaultEffectKeyOf(runId, toolName, inputFingerprint(input));
}

/** {@link defaultEffectKey} from the input's fingerprint ({@link inputFingerprint}), when it is already known. */
function defaultEffectKeyOf(runId: string, toolName: string, fingerprint: string): string {
  return `${runId}:${toolName}:${fingerprint}`;
}

/** Checks what a custom `effectKey` returned: a non-empty string, or an {@link InvalidEffectKeyError}. */
export function assertEffectKey(toolName: string, key: unknown): string {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidEffectKeyError({ toolName, got: key });
  return key;
}

/** A call's effect key, with the input's fingerprint when computing the key hashed the input. */
export interface CallKey {
  readonly key: string;
  /** Hex SHA-256 of the canonical JSON input: the last 64 characters of a default key. */
  readonly fingerprint?: string;
}

/** The effect key of a call: the tool's `effectKey`, checked, or the default key. */
export async function resolveEffectKey(call: EffectCall): Promise<string> {
  return (await resolveCallKey(call)).key;
}

/**
 * {@link resolveEffectKey} with the fingerprint a default key is built from, so the protocol does
 * not hash the input again; without a promise when no hook has to be awaited (the common case).
 */
export function resolveCallKey(call: EffectCall): CallKey | Promise<CallKey> {
  const { tool, toolName, input, ctx, options } = call;
  if (call.key !== undefined) {
    const key = assertEffectKey(toolName, call.key);
    return call.fingerprint === undefined ? { key } : { key, fingerprint: call.fingerprint };
  }
  if (tool.effectKey === undefined) {
    const fingerprint = inputFingerprint(input);
    return { key: defaultEffectKeyOf(ctx.run.runId, toolName, fingerprint), fingerprint };
  }
  const custom = tool.effectKey(input, ctx, options);
  return typeof custom === 'string'
    ? { key: assertEffectKey(toolName, custom) }
    : Promise.resolve(custom).then((key) => ({ key: assertEffectKey(toolName, key) }));
}
