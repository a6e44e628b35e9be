import { describeError, type Actor } from './actors.js';
import { explainDuplicate, type Explanation } from './duplicate-causes.js';
import { claimOf, lastCheck, leaseEndAt, liveAt, type History } from './history.js';

/** One invariant a history broke, in one line. */
export interface Violation {
  readonly invariant: string;
  readonly message: string;
}

/** The verdict on one history. */
export interface Verdict {
  readonly violations: Violation[];
  /** Second applications the strategy admits, each with the documented cause that explains it. */
  readonly explained: readonly Explanation[];
}

/**
 * Every invariant, checked after a history (before its teardown). An empty list of violations is
 * a correct history.
 */
export function judge(h: History): Verdict {
  const explained: Explanation[] = [];
  const violations = checkInvariants(h, explained);
  return { violations, explained };
}

function checkInvariants(h: History, explained: Explanation[]): Violation[] {
  return [
    ...atMostOnce(h, explained),
    ...lastCheckSound(h),
    ...callersGotTheRecord(h),
    ...noKeyLeftBlocked(h),
    ...throwsLeaveNothing(h),
    ...recordNeverOverwritten(h),
    ...liveCallersSettle(h),
  ];
}

/**
 * At most one application per key where the tool's strategy makes that possible (zero
 * tolerance); for the others, every second application is explained by a cause the README
 * documents for that strategy (see {@link explainDuplicate}).
 */
function atMostOnce(h: History, explained: Explanation[]): Violation[] {
  const apps = h.remote.applications;
  const violations: Violation[] = [];
  for (let k = 1; k < apps.length; k++) {
    const later = apps[k];
    if (later === undefined) continue;
    const explanations = apps.slice(0, k).flatMap((earlier) => explainDuplicate(h, earlier, later));
    const admitted = explanations.filter((e) => h.remote.admits.has(e.cause));
    const first = admitted[0];
    if (first !== undefined) {
      explained.push(first);
      continue;
    }
    const list = apps.map((a) => `${a.by} at ${a.at} ms`).join(', ');
    const why =
      explanations.length === 0
        ? 'no documented cause explains it'
        : `the ${h.remote.kind} strategy must prevent even this: ${explanations.map((e) => `${e.cause} (${e.because})`).join('; ')}`;
    violations.push({
      invariant: 'at-most-once',
      message: `${apps.length} applications on the ${h.remote.kind} remote (${list}); application ${k + 1}: ${why}`,
    });
  }
  return violations;
}

/**
 * The protocol's last check before `execute` is sound: the attempt still owned a live claim when
 * it checked, the check did not answer "lost" or "recorded", and no record was durable when it
 * reached the store. (The spec: a recorded result is returned without running anything; the
 * architecture: never execute beside another attempt's claim.)
 */
function lastCheckSound(h: History): Violation[] {
  const violations: Violation[] = [];
  for (const actor of h.actors) {
    if (actor.executeStartedAt === undefined) continue;
    const claim = claimOf(h, actor);
    const check = lastCheck(h, actor);
    const via =
      check.request === undefined
        ? 'a local check only (no round trip)'
        : `its ${check.request.op} at ${check.arrivedAt} ms`;
    const problems: string[] = [];
    if (claim === undefined) problems.push('it never held a claim');
    else if (!liveAt(claim, check.sentAt) && !liveAt(claim, check.arrivedAt)) {
      problems.push(
        claim.ended !== undefined && claim.ended.at <= check.arrivedAt
          ? `its claim had ended at ${claim.ended.at} ms (${claim.ended.how})`
          : `its lease had run out at ${leaseEndAt(claim, check.arrivedAt)} ms`,
      );
    }
    if (check.request?.status === 'lost') problems.push('its renewal answered "lost"');
    if (check.request?.op === 'get' && check.request.status === 'record') problems.push('its read found the record');
    const durable = h.ledger.durable;
    if (durable !== undefined && durable.at < check.arrivedAt) {
      problems.push(`the record was durable since ${durable.at} ms (${durable.via} by ${durable.by})`);
    }
    if (problems.length > 0) {
      violations.push({
        invariant: 'last-check-sound',
        message: `${actor.name} executed at ${actor.executeStartedAt} ms after ${via}, although ${problems.join(', and ')}`,
      });
    }
  }
  return violations;
}

/**
 * Every caller that returned got the recorded result: equal to the record in the store. A call
 * that returned with its record still pending (the write failed after the effect) is excused
 * only when the store holds no record or a documented duplicate made another one.
 */
function callersGotTheRecord(h: History): Violation[] {
  const violations: Violation[] = [];
  const durable = h.ledger.durable;
  for (const actor of h.actors) {
    if (actor.outcome?.kind !== 'returned') continue;
    const { result, report } = actor.outcome.resolution;
    const got = JSON.stringify(result ?? null);
    if (durable === undefined) {
      if (!report.recordPending) {
        violations.push({
          invariant: 'callers-got-the-record',
          message: `${actor.name} returned ${got} (${report.outcome}) but the store holds no record`,
        });
      }
      continue;
    }
    const stored = JSON.stringify(durable.record.result ?? null);
    if (got === stored) continue;
    if (report.recordPending && h.remote.applications.length > 1) continue;
    violations.push({
      invariant: 'callers-got-the-record',
      message: `${actor.name} returned ${got} (${report.outcome}${report.recordPending ? ', record pending' : ''}) but the record holds ${stored} (${durable.via} by ${durable.by})`,
    });
  }
  return violations;
}

/** No key is left claimed without a record past one lease and one retry once every attempt is done or dead. */
function noKeyLeftBlocked(h: History): Violation[] {
  if (h.probe?.answer !== 'busy') return [];
  return [
    {
      invariant: 'no-key-left-blocked',
      message: `at ${h.probe.at} ms, with every attempt done or dead for a lease and a retry, the key is still claimed by ${h.probe.holder ?? '?'} (${h.probe.remainingMs ?? '?'} ms left) with no record`,
    },
  ];
}

/**
 * A throw leaves no record and no live claim held by the thrower: the thrower wrote no record,
 * released (or tried to release) a claim it knew it held, and renews nothing after it threw.
 */
function throwsLeaveNothing(h: History): Violation[] {
  const violations: Violation[] = [];
  for (const actor of h.actors) {
    if (actor.outcome?.kind !== 'threw') continue;
    const at = actor.outcome.at;
    const error = describeError(actor.outcome.error);
    if (h.ledger.durable?.by === actor.name) {
      violations.push({
        invariant: 'throw-leaves-nothing',
        message: `${actor.name} threw (${error}) at ${at} ms although its own record was written at ${h.ledger.durable.at} ms`,
      });
    }
    const claim = claimOf(h, actor);
    const knew = h.ledger.requests.some(
      (r) => r.op === 'claim' && r.owner === actor.owner && r.status === 'acquired' && r.answered === 'ok',
    );
    const released = h.ledger.requests.some((r) => r.op === 'release' && r.owner === actor.owner && r.sentAt <= at);
    if (claim !== undefined && knew && !released && liveAt(claim, at)) {
      violations.push({
        invariant: 'throw-leaves-nothing',
        message: `${actor.name} threw (${error}) at ${at} ms still holding a live claim (lease until ${claim.leaseUntil} ms) it never released`,
      });
    }
    const renewedAfter = h.ledger.requests.find((r) => r.op === 'renew' && r.owner === actor.owner && r.sentAt > at);
    if (renewedAfter !== undefined) {
      violations.push({
        invariant: 'throw-leaves-nothing',
        message: `${actor.name} threw (${error}) at ${at} ms and still renewed its claim at ${renewedAfter.sentAt} ms`,
      });
    }
  }
  return violations;
}

/** A record, once written, is never replaced by a different one. */
function recordNeverOverwritten(h: History): Violation[] {
  const o = h.ledger.overwritten;
  if (o === undefined) return [];
  return [{ invariant: 'record-never-overwritten', message: `at ${o.at} ms the record ${o.was} became ${o.now}` }];
}

/**
 * A caller in a live process settles: unless its process died or its own `execute` hangs, every
 * started call returns or throws before the end of the history (busy waits, the in-process
 * sharing of identical calls and store timeouts are all bounded).
 */
function liveCallersSettle(h: History): Violation[] {
  return h.actors
    .filter((a) => stuck(a))
    .map((a) => ({
      invariant: 'live-callers-settle',
      message: `${a.name} (started at ${a.startedAt ?? '?'} ms in ${a.process.name}) never settled, although its process is alive and its own execute ${a.executeStartedAt === undefined ? 'never started' : 'does not hang'}`,
    }));
}

function stuck(a: Actor): boolean {
  if (!a.started || a.settled || a.process.isDead) return false;
  return !(a.plan.execute.hangs && a.executeStartedAt !== undefined);
}
