const PREFIX = '<!-- chamvi:effect=';
const SUFFIX = ' -->';
const MARKER = /<!-- chamvi:effect=(\S*) -->/g;

/**
 * A hidden HTML comment naming an effect key: `<!-- chamvi:effect=<key> -->`.
 *
 * Embed it in what an effect tool creates (a comment body, a pull request description) so that
 * `alreadyApplied` can find the effect again after a crash. Characters that would end or break
 * the comment are percent-encoded (`%` `<` `>` whitespace, and a `-` that would form `--`), so the
 * marker is always exactly one HTML comment; {@link findEffectMarkers} decodes them.
 *
 * A plain marker proves nothing about who wrote it: anyone who can post text can plant one. Check
 * the author when you read it back, or use a signed marker.
 * @public
 */
export function effectMarker(key: string): string {
  return `${PREFIX}${encodeMarkerKey(key)}${SUFFIX}`;
}

/**
 * Every effect key found in `text` as a marker, in order of appearance, exactly as it was given
 * to {@link effectMarker}. Compare keys with `===`: `a:b:1` is not `a:b:10`.
 * @public
 */
export function findEffectMarkers(text: string): string[] {
  const keys: string[] = [];
  for (const match of text.matchAll(MARKER)) {
    const key = decodeMarkerKey(match[1] ?? '');
    if (key !== undefined) keys.push(key);
  }
  return keys;
}

function encodeMarkerKey(key: string): string {
  return key.replace(/[%<>\s]/gu, (c) => encodeURIComponent(c)).replace(/-(?=-)/g, '%2D');
}

/** `undefined` for a malformed escape: such a marker was not written by {@link effectMarker}. */
function decodeMarkerKey(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}
