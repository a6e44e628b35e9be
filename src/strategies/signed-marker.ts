import { createHmac, timingSafeEqual } from 'node:crypto';

/** What an HMAC secret may be: the worker's secret, never shown to the model or stored in run state. @public */
export type MarkerSecret = string | Uint8Array;

const PREFIX = '<!-- chamvi:effect=';
const SIG = ';sig=';
const SUFFIX = ' -->';
/** The signed form: the key (encoded, so no `;`, whitespace, `<`, `>` or `--`) and 64 hex digits. */
const SIGNED_MARKER = /<!-- chamvi:effect=([^\s;<>]*);sig=([0-9a-f]{64}) -->/g;
/** Domain separation: a signature over a key means "chamvi effect marker, format v1", nothing else. */
const DOMAIN = 'chamvi:effect-marker:v1\n';

/**
 * A signed hidden HTML comment naming an effect key:
 *
 * ```
 * <!-- chamvi:effect=<encoded key>;sig=<HMAC-SHA256 hex> -->
 * ```
 *
 * - `<encoded key>` is the key with `%`, `;`, `<`, `>`, whitespace and a `-` that would form `--`
 *   percent-encoded (the encoding of `effectMarker`, plus `;`), so the marker is always exactly one
 *   HTML comment and `decodeURIComponent` gives the key back.
 * - `sig` is 64 lowercase hex digits: HMAC-SHA256 with `secret` over
 *   `"chamvi:effect-marker:v1\n" + key` (the raw key, UTF-8).
 *
 * Only a holder of the secret can write a marker that {@link findSignedEffectMarkers} accepts, so
 * a marker planted by a third party, or text the model wrote into the bot's own comment, never
 * passes for an applied effect. Keep the secret in the worker (environment, secret manager): not
 * in run state or tool input, which Temporal records in workflow history.
 *
 * A signature binds the key, not the text around it: a copy of a genuine marker elsewhere still
 * verifies. That is harmless when the key names the place (the default key hashes the input, so
 * it includes the issue number), and the author check of {@link markerApplied} narrows it further.
 *
 * A marker makes a comment findable after a crash; it cannot stop a second one. An attempt paused
 * past its lease between its last check and its POST still posts (see {@link markerApplied}).
 * @public
 */
export function signedEffectMarker(key: string, secret: MarkerSecret): string {
  assertSecret(secret);
  return `${PREFIX}${encodeKey(key)}${SIG}${sign(key, secret)}${SUFFIX}`;
}

/**
 * The effect keys of every signed marker in `text` whose signature verifies with `secret`, in
 * order of appearance, decoded exactly as given to {@link signedEffectMarker}. Plain markers,
 * markers with a wrong or malformed signature and malformed escapes are skipped. Signatures are
 * compared in constant time. Compare the keys with `===`: `a:b:1` is not `a:b:10`.
 * @public
 */
export function findSignedEffectMarkers(text: string, secret: MarkerSecret): string[] {
  assertSecret(secret);
  const keys: string[] = [];
  for (const match of text.matchAll(SIGNED_MARKER)) {
    const key = decodeKey(match[1] ?? '');
    if (key !== undefined && verify(key, match[2] ?? '', secret)) keys.push(key);
  }
  return keys;
}

/**
 * `text` with every chamvi marker (plain or signed) defused: `<!-- chamvi:` becomes
 * `<!-- chamvi_:`, which no finder matches. Apply it to untrusted text (what the model wrote)
 * before appending your own marker, so that a body cannot carry a marker of its own.
 * @public
 */
export function neutralizeEffectMarkers(text: string): string {
  return text.replace(/<!--(\s*)chamvi:/gi, '<!--$1chamvi_:');
}

function sign(key: string, secret: MarkerSecret): string {
  return createHmac('sha256', secret).update(DOMAIN).update(key, 'utf8').digest('hex');
}

function verify(key: string, sigHex: string, secret: MarkerSecret): boolean {
  const expected = Buffer.from(sign(key, secret), 'hex');
  const given = Buffer.from(sigHex, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function encodeKey(key: string): string {
  return key.replace(/[%;<>\s]/gu, (c) => encodeURIComponent(c)).replace(/-(?=-)/g, '%2D');
}

function decodeKey(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}

function assertSecret(secret: MarkerSecret): void {
  if (secret === undefined || secret === null || secret.length === 0)
    throw new TypeError('Signed effect markers need a non-empty secret (string or bytes).');
}
