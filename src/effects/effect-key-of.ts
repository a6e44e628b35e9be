const EFFECT_KEY = Symbol.for('@chamvi/temporal/effect-key');
const EFFECT_FENCE = Symbol.for('@chamvi/temporal/effect-fence');

/**
 * The call options handed to an effect tool's `execute`, with the call's effect key and, on stores
 * with claims, the claim's fence number attached (non-enumerable).
 */
export function withEffectCall<T extends object>(options: T, key: string, fence: number | undefined): T {
  // A copy of the properties as they are, not their values: a getter (messages read from the store
  // when a tool looks) stays a getter, and what the engine attached (the step index) stays attached.
  const copy = Object.create(Object.getPrototypeOf(options) as object, Object.getOwnPropertyDescriptors(options)) as T;
  const attached = Object.defineProperty(copy, EFFECT_KEY, { value: key, enumerable: false });
  return fence === undefined
    ? attached
    : Object.defineProperty(attached, EFFECT_FENCE, { value: fence, enumerable: false });
}

/**
 * The effect key of the call whose `execute` received these options: what `effectKey` returned
 * (or the default key). Lets `execute` embed the key in what it creates (`effectMarker(key)`, an
 * `Idempotency-Key`, a message id) without computing it a second time, so the key and the marker
 * can never disagree.
 *
 * ```ts
 * execute: async ({ issue, body }, options) => postComment(issue, `${body}\n${effectMarker(effectKeyOf(options))}`),
 * ```
 *
 * @throws TypeError when the options did not come through the effect protocol (an unwrapped
 *   `execute` called directly has no key).
 * @public
 */
export function effectKeyOf(options: object): string {
  const key = (options as { [EFFECT_KEY]?: unknown })[EFFECT_KEY];
  if (typeof key !== 'string') {
    throw new TypeError(
      'effectKeyOf: these call options carry no effect key. Call the tool through the engine (runAgent, the Temporal worker or wrapToolsForRun), which attaches it; an unwrapped execute has none.',
    );
  }
  return key;
}

/**
 * The fence number of the claim under which this `execute` runs: it grows every time another
 * attempt takes the key over, so a remote that remembers the highest fence it has seen per key can
 * refuse a write from an older attempt (a process that was paused past its lease, a "zombie"). It is
 * the one tool that closes the window no store can: between the protocol's last ownership check and
 * the remote write. Pass it where the remote offers a conditional write (a compare-and-swap, a
 * version or precondition header, a `WHERE fence < $1` update).
 *
 * `undefined` when the store has no claims (a plain `IEffectStore`) or the options did not come
 * through the effect protocol.
 * @public
 */
export function effectFenceOf(options: object): number | undefined {
  const fence = (options as { [EFFECT_FENCE]?: unknown })[EFFECT_FENCE];
  return typeof fence === 'number' ? fence : undefined;
}
