import { findEffectMarkers } from '../effects/effect-marker.js';
import { findSignedEffectMarkers, type MarkerSecret } from './signed-marker.js';

/**
 * The shape of a comment (GitHub issue comment, pull request description, chat message) that
 * marker reconciliation reads: its text and its author's login. Octokit's comment objects fit.
 * @public
 */
export interface MarkedComment {
  /** The comment's text, where the marker is looked for. */
  readonly body?: string | null;
  /** The comment's author, checked against the trusted authors. */
  readonly user?: { readonly login: string } | null;
}

/** Who a marker must come from to count. At least one of `author` and `secret` is required. @public */
export interface MarkerTrust {
  /**
   * Login of the account the tool writes as (the bot). Comments by anyone else never count, even
   * with a valid marker. Compared exactly.
   */
  readonly author?: string;
  /**
   * The worker's HMAC secret: only signed markers that verify count (see `signedEffectMarker`),
   * so neither a third party nor the model writing through the bot's own account can plant one.
   * Without it, plain markers count, and `author` is all that protects you.
   */
  readonly secret?: MarkerSecret;
}

/** What {@link markerApplied} takes. @public */
export interface MarkerQuery<C extends MarkedComment = MarkedComment> extends MarkerTrust {
  /** Every comment of the thread (page through all of them: never a lagging search index). */
  readonly comments: Iterable<C>;
  /** The effect key to look for; matched exactly (`a:b:1` is not `a:b:10`). */
  readonly key: string;
}

/**
 * What marker reconciliation guarantees, and where it ends:
 *
 * - **A crash** (a throw, SIGKILL) after the comment was posted and before its result was recorded
 *   never posts a second comment: the retry's `alreadyApplied` reads the comment back.
 * - **An attempt paused past its lease** (SIGSTOP, a VM freeze, a GC pause, a partition from the
 *   effect store) after its last check and before its POST reaches the remote **can still post a
 *   second comment**: meanwhile another attempt took the key over, found no marker, and posted;
 *   the paused one then posts too. A comment API (GitHub's included) has no conditional write, so
 *   neither the store nor the marker can refuse that late POST, and `effectFenceOf` has nowhere to
 *   go. Where a second comment is unacceptable, put the effect behind a remote that can refuse a
 *   late write (an `Idempotency-Key` API, a compare-and-swap, a fence-checked endpoint).
 *
 * The first comment that proves the effect with `key` was applied, or `undefined`: a comment by
 * `author` (when given) carrying a marker for exactly `key`, signed with `secret` (when given;
 * then plain markers never count).
 *
 * Give at least one of `author` and `secret`; `secret` and `author` together is the safe default.
 * A plain marker is text anyone who can comment can write, so checking it without either would
 * let a planted comment suppress the effect; this throws a `TypeError` instead.
 * @public
 */
export function markerApplied<C extends MarkedComment>(query: MarkerQuery<C>): C | undefined {
  const matches = markerMatcher(query, query.key);
  for (const comment of query.comments) if (matches(comment)) return comment;
  return undefined;
}

/**
 * {@link markerApplied} over pages of comments as they arrive (for example
 * `octokit.paginate.iterator(...)` mapped to `.data`). Reads every page until a match; when
 * nothing matches, every page has been read. Never use a search index here: it lags behind writes,
 * so the comment of an attempt that just crashed would not be found.
 * @public
 */
export async function markerAppliedInPages<C extends MarkedComment>(
  pages: AsyncIterable<readonly C[]> | Iterable<readonly C[]>,
  query: MarkerTrust & { readonly key: string },
): Promise<C | undefined> {
  const matches = markerMatcher(query, query.key);
  for await (const page of pages) for (const comment of page) if (matches(comment)) return comment;
  return undefined;
}

function markerMatcher(trust: MarkerTrust, key: string): (comment: MarkedComment) => boolean {
  if (typeof key !== 'string' || key === '') throw new TypeError('markerApplied: key must be a non-empty string.');
  const author = trust.author === '' ? undefined : trust.author;
  const secret = trust.secret;
  if (author === undefined && secret === undefined) {
    throw new TypeError(
      'markerApplied needs `author` (the bot login) or `secret` (for signed markers): a plain marker from anyone proves nothing, anyone can post one.',
    );
  }
  return (comment) => {
    if (author !== undefined && comment.user?.login !== author) return false;
    const body = comment.body ?? '';
    const keys = secret === undefined ? findEffectMarkers(body) : findSignedEffectMarkers(body, secret);
    return keys.includes(key);
  };
}
