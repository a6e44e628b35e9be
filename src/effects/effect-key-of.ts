const EFFECT_KEY = Symbol.for('@chamvi/temporal/effect-key');

/** The call options handed to an effect tool's `execute`, with the call's effect key attached (non-enumerable). */
export function withEffectKey<T extends object>(options: T, key: string): T {
  return Object.defineProperty({ ...options }, EFFECT_KEY, { value: key, enumerable: false });
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
