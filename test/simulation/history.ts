import type { Actor } from './actors.js';
import type { Remote } from './remotes.js';
import type { Scenario } from './scenario.js';
import type { SimProcess } from './sim-process.js';
import type { ClaimHistory, StoreLedger, StoreRequest } from './store-ledger.js';

/** Everything observed in one history, as the invariants read it. */
export interface History {
  readonly scenario: Scenario;
  readonly actors: readonly Actor[];
  readonly processes: ReadonlyMap<string, SimProcess>;
  readonly ledger: StoreLedger;
  readonly remote: Remote;
  /** The key probed once every attempt was done or dead, past one lease and one retry. */
  readonly probe?: {
    readonly at: number;
    readonly answer: 'free' | 'recorded' | 'busy';
    readonly holder?: string;
    readonly remainingMs?: number;
  };
}

/** When the lease of `claim` ran out as the store saw it at virtual time `t` (its last renewal by then plus the lease). */
export function leaseEndAt(claim: ClaimHistory, t: number): number {
  return Math.max(claim.acquiredAt, ...claim.renewedAt.filter((r) => r <= t)) + claim.leaseMs;
}

/** Whether `claim` was the key's claim with an unexpired lease at virtual time `t`. */
export function liveAt(claim: ClaimHistory, t: number): boolean {
  if (claim.acquiredAt > t) return false;
  if (claim.ended !== undefined && claim.ended.at <= t) return false;
  return leaseEndAt(claim, t) > t;
}

/** The claim an attempt executed under: the one the store granted to its owner token. */
export function claimOf(h: History, actor: Actor): ClaimHistory | undefined {
  return h.ledger.claimOf(actor.owner);
}

/**
 * The protocol's last check before an attempt's `execute`: the last store round trip it made
 * after its claim (and `alreadyApplied`) and before `execute` (a renewal or a read), with the
 * virtual times it was sent and arrived. A protocol that checked locally only (no round trip)
 * checked at the moment `execute` started.
 */
export function lastCheck(
  h: History,
  actor: Actor,
): { readonly sentAt: number; readonly arrivedAt: number; readonly request?: StoreRequest } {
  const start = actor.executeStartedAt ?? Infinity;
  const claimed = h.ledger.requests.find(
    (r) => r.op === 'claim' && r.owner === actor.owner && r.status === 'acquired' && r.answered === 'ok',
  );
  const from = Math.max(claimed?.answeredAt ?? 0, actor.checkedAt ?? 0);
  let last: StoreRequest | undefined;
  for (const r of h.ledger.requests) {
    const mine = r.owner === actor.owner || (r.op === 'get' && r.process === actor.process.name);
    if (!mine || (r.op !== 'renew' && r.op !== 'get')) continue;
    if (r.sentAt < from || r.answered !== 'ok' || (r.answeredAt ?? Infinity) > start) continue;
    if (last === undefined || r.sentAt >= last.sentAt) last = r;
  }
  if (last === undefined || last.arrivedAt === undefined) return { sentAt: start, arrivedAt: start };
  return { sentAt: last.sentAt, arrivedAt: last.arrivedAt, request: last };
}

/** The actor named `name` (an application's or a record's author). */
export function actorNamed(h: History, name: string): Actor | undefined {
  return h.actors.find((a) => a.name === name);
}
