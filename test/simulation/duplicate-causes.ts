import type { Actor } from './actors.js';
import { actorNamed, claimOf, lastCheck, liveAt, type History } from './history.js';
import type { Application, DuplicateCause } from './remotes.js';

/** A documented cause found for a second application, with the evidence in words. */
export interface Explanation {
  readonly cause: DuplicateCause;
  readonly because: string;
}

/**
 * Why the effect could be applied a second time (`later`, after `earlier`), by the causes the
 * README documents; empty when none applies. Each cause is checked on the evidence of the
 * history, strictly, so that a protocol bug cannot hide behind it:
 *
 * - `crash-window`: the earlier attempt's effect landed, the later attempt claimed the key only
 *   after that, and still no record was durable when it made its last check: the earlier process
 *   died, froze, or lost or delayed its record write in between.
 * - `paused-past-lease`, `renewal-unanswered-past-lease`: one of the two attempts executed under a
 *   live claim, its lease then ran out while it was cut off from the store (its process paused at
 *   that moment; or its lease keeper still waiting for a renewal's answer, too late to try again),
 *   its write landed after that, and the other attempt claimed the key after the lease ended.
 * - `abort-grace-exceeded`: one attempt's `execute` was still running when the other claimed the
 *   key, at least `abortGraceMs` after its signal aborted (the protocol's documented cap).
 */
export function explainDuplicate(h: History, earlier: Application, later: Application): Explanation[] {
  const p = actorNamed(h, earlier.by);
  const q = actorNamed(h, later.by);
  if (p === undefined || q === undefined || p === q) return [];
  const found: Explanation[] = [];
  const window = crashWindow(h, p, earlier, q);
  if (window !== undefined) found.push({ cause: 'crash-window', because: window });
  for (const [zombie, landed, other] of [
    [p, earlier, q],
    [q, later, p],
  ] as const) {
    const cut = cutOffPastLease(h, zombie, landed, other);
    if (cut !== undefined) found.push(cut);
    const grace = abortGraceExceeded(h, zombie, other);
    if (grace !== undefined) found.push({ cause: 'abort-grace-exceeded', because: grace });
  }
  return found;
}

function crashWindow(h: History, p: Actor, applied: Application, q: Actor): string | undefined {
  const checked = lastCheck(h, q).arrivedAt;
  const durable = h.ledger.durable;
  if (durable !== undefined && durable.at < checked) return undefined;
  const qClaim = claimOf(h, q);
  if (qClaim === undefined || qClaim.acquiredAt < applied.at) return undefined;
  const diedAt = p.process.diedAt;
  const write = h.ledger.requests.find(
    (r) => r.by === p.name && (r.op === 'complete' || r.op === 'put') && r.sentAt >= applied.at,
  );
  const fate =
    diedAt !== undefined && diedAt <= checked
      ? `its process died at ${diedAt} ms`
      : write === undefined || write.sentAt >= checked
        ? `it had not sent its record yet${p.process.pauseIntervals().some((x) => x.to > applied.at && x.from < checked) ? ' (its process was frozen)' : ''}`
        : write.arrivedAt === undefined
          ? `its ${write.op} sent at ${write.sentAt} ms was lost`
          : `its ${write.op} sent at ${write.sentAt} ms arrived only at ${write.arrivedAt} ms`;
  return `${p.name}'s effect landed at ${applied.at} ms and ${fate}; ${q.name} claimed the key at ${qClaim.acquiredAt} ms and checked at ${checked} ms with no record durable`;
}

function cutOffPastLease(h: History, zombie: Actor, landed: Application, other: Actor): Explanation | undefined {
  const claim = claimOf(h, zombie);
  const otherClaim = claimOf(h, other);
  if (claim === undefined || otherClaim === undefined || zombie.executeStartedAt === undefined) return undefined;
  if (claim.ended !== undefined && claim.ended.how !== 'taken over') return undefined;
  if (liveAt(claim, landed.at)) return undefined;
  const expiredAt = claim.leaseUntil;
  if (zombie.executeStartedAt >= expiredAt || otherClaim.acquiredAt < expiredAt) return undefined;
  if (zombie.process.pausedAt(expiredAt)) {
    return {
      cause: 'paused-past-lease',
      because: `${zombie.name}'s process was paused when its lease ended (${expiredAt} ms), after its execute started (${zombie.executeStartedAt} ms); its write landed at ${landed.at} ms; ${other.name} claimed the key at ${otherClaim.acquiredAt} ms`,
    };
  }
  // A claim's keep-alive renews once a third of the lease has passed, checking every sixth, and
  // sends no renewal while one is unanswered. So a keep-alive that kept trying was still waiting for
  // a renewal (lost, stalled, or held by a pause) too close to the end to try again; one that
  // stopped (a bug) had every answer early and sent nothing more.
  const tick = Math.max(1, Math.floor(h.scenario.leaseMs / 6));
  const waiting = h.ledger.requests.find(
    (r) =>
      r.op === 'renew' &&
      r.owner === zombie.owner &&
      r.sentAt < expiredAt &&
      (r.answeredAt ?? Infinity) >= expiredAt - tick - 1,
  );
  if (waiting === undefined) return undefined;
  const fate =
    waiting.arrivedAt === undefined
      ? 'never arrived'
      : `arrived at ${waiting.arrivedAt} ms and was answered ${waiting.answeredAt === undefined ? 'never' : `at ${waiting.answeredAt} ms`}`;
  return {
    cause: 'renewal-unanswered-past-lease',
    because: `${zombie.name}'s lease ended at ${expiredAt} ms while its renewal sent at ${waiting.sentAt} ms was unanswered (it ${fate}; ${waiting.fault === 'none' ? 'slow link' : waiting.fault}); its write landed at ${landed.at} ms; ${other.name} claimed the key at ${otherClaim.acquiredAt} ms`,
  };
}

function abortGraceExceeded(h: History, zombie: Actor, other: Actor): string | undefined {
  const otherClaim = claimOf(h, other);
  const { executeStartedAt: started, executeEndedAt: ended, abortedAt } = zombie;
  if (otherClaim === undefined || started === undefined || abortedAt === undefined) return undefined;
  const at = otherClaim.acquiredAt;
  if (started > at || (ended !== undefined && ended <= at)) return undefined;
  if (at < abortedAt + h.scenario.abortGraceMs) return undefined;
  return `${zombie.name}'s execute was still running at ${at} ms, when ${other.name} claimed the key, ${at - abortedAt} ms after its signal aborted (cap ${h.scenario.abortGraceMs} ms)`;
}
