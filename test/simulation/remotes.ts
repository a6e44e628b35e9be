import { effectMarker, findEffectMarkers } from '../../src/effects/effect-marker.js';

/**
 * The remote systems an effect lands on, one per history, each with its reconciliation strategy
 * (see the spec's "The crash window"):
 * - `marker`: a comment list; `alreadyApplied` reads the list for the key's `effectMarker`;
 * - `idempotency-key`: an HTTP endpoint that dedupes requests by their `Idempotency-Key` (the key);
 * - `set`: add-to-set semantics (a label); adding what is there changes nothing;
 * - `no-check`: a comment list and no check at all;
 * - `fenced`: a comment list that takes the claim's fence number on every request of `execute`
 *   (as a storage service taking fencing tokens does): it remembers the highest fence it has seen
 *   for the key and refuses a request with a lower one. `execute` first reads with its fence (which
 *   registers it, and finds a marker an earlier attempt left), then appends with it. Only offered
 *   when the protocol hands `execute` the fence (`effectFenceOf`).
 */
export type RemoteKind = 'marker' | 'idempotency-key' | 'set' | 'no-check' | 'fenced';

/** Every kind of remote, in the order a scenario draws them. */
export const REMOTE_KINDS: readonly RemoteKind[] = ['marker', 'idempotency-key', 'set', 'no-check', 'fenced'];

/**
 * Causes of a second application that no store can rule out (README, "Why"):
 * - `crash-window`: the process died, froze, or lost its record write between the effect and a
 *   durable record, and the retry had nothing to find remotely (the spec's "crash window");
 * - `paused-past-lease`: the process was paused past its lease between its last ownership check
 *   and the remote write;
 * - `renewal-unanswered-past-lease`: the same without a pause: the attempt's lease keeper was
 *   still waiting for a renewal (lost, stalled) when the lease ran out, so the store handed the
 *   key to another attempt while this one's write was on its way. Named so that a trace says
 *   what happened, but admitted by no strategy: the keeper sends another renewal once one has
 *   been unanswered for a third of the lease, so a live process that can reach its store keeps it;
 * - `abort-grace-exceeded`: an `execute` still running after its attempt was cancelled or timed
 *   out outlived the protocol's cap (`abortGraceMs`), after which the key is released with a warning.
 */
export type DuplicateCause =
  'crash-window' | 'paused-past-lease' | 'renewal-unanswered-past-lease' | 'abort-grace-exceeded';

/** One application of the effect as the remote counts it. */
export interface Application {
  /** Virtual ms when it landed. */
  readonly at: number;
  /** The attempt whose `execute` applied it. */
  readonly by: string;
  /** What the remote answers for it (a comment id, a ticket id, a label). */
  readonly result: RemoteResult;
  readonly fence?: number;
}

/** The answer of a remote, as `execute` and `alreadyApplied` return it. */
export type RemoteResult = { readonly commentId: number } | { readonly ticketId: number } | { readonly label: string };

/** The error a remote answers with when it refuses a request. */
export class RemoteRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RemoteRefusedError';
  }
}

/** Sends one request to the remote from the calling attempt's process (latency, death, pauses). */
export type RemoteCall = <T>(label: string, apply: () => T, describe: (result: T) => string) => Promise<T>;

/** A remote system and the tool's strategy against it. */
export interface Remote {
  readonly kind: RemoteKind;
  /** Every application of the effect, in order of landing. */
  readonly applications: readonly Application[];
  /** Causes of a second application this strategy cannot rule out; empty: zero tolerance. */
  readonly admits: ReadonlySet<DuplicateCause>;
  /** `alreadyApplied`'s remote read, when the tool has one. */
  readonly check?: (call: RemoteCall, key: string) => Promise<RemoteResult | undefined>;
  /** `execute`'s remote write (one or more requests). */
  apply(call: RemoteCall, key: string, by: string, fence: number | undefined): Promise<RemoteResult>;
}

const ZOMBIE_CAUSES: readonly DuplicateCause[] = ['paused-past-lease', 'abort-grace-exceeded'];
const ALL_CAUSES: ReadonlySet<DuplicateCause> = new Set(['crash-window', ...ZOMBIE_CAUSES]);

interface Comment {
  readonly id: number;
  readonly body: string;
}

/** A comment list; `applications` are the comments that carry the effect. */
class CommentList {
  readonly comments: Comment[] = [];
  readonly applications: Application[] = [];

  post(key: string, by: string, now: number, fence?: number): RemoteResult {
    const id = this.comments.length + 1;
    this.comments.push({ id, body: `Thanks for the report.\n${effectMarker(key)}` });
    const result = { commentId: id };
    this.applications.push({ at: now, by, result, ...(fence === undefined ? {} : { fence }) });
    return result;
  }

  find(key: string): RemoteResult | undefined {
    const found = this.comments.find((c) => findEffectMarkers(c.body).includes(key));
    return found === undefined ? undefined : { commentId: found.id };
  }
}

const describe = (r: RemoteResult | undefined): string => (r === undefined ? 'nothing' : JSON.stringify(r));

/** The remote of `kind`; `now` is the virtual clock (landing times). */
export function createRemote(kind: RemoteKind, now: () => number): Remote {
  switch (kind) {
    case 'marker': {
      const list = new CommentList();
      return {
        kind,
        applications: list.applications,
        admits: new Set(ZOMBIE_CAUSES),
        check: (call, key) =>
          call(
            'list comments',
            () => list.find(key),
            (r) => `found ${describe(r)}`,
          ),
        apply: (call, key, by) => call('post comment', () => list.post(key, by, now()), describe),
      };
    }
    case 'no-check': {
      const list = new CommentList();
      return {
        kind,
        applications: list.applications,
        admits: ALL_CAUSES,
        apply: (call, key, by) => call('post comment', () => list.post(key, by, now()), describe),
      };
    }
    case 'idempotency-key': {
      const tickets = new Map<string, RemoteResult>();
      const applications: Application[] = [];
      return {
        kind,
        applications,
        admits: new Set(),
        apply: (call, key, by) =>
          call(
            'POST /tickets (Idempotency-Key)',
            () => {
              const seen = tickets.get(key);
              if (seen !== undefined) return seen;
              const result = { ticketId: tickets.size + 1 };
              tickets.set(key, result);
              applications.push({ at: now(), by, result });
              return result;
            },
            describe,
          ),
      };
    }
    case 'set': {
      const labels = new Set<string>();
      const applications: Application[] = [];
      return {
        kind,
        applications,
        admits: new Set(),
        apply: (call, _key, by) =>
          call(
            'add label',
            () => {
              const result = { label: 'needs-triage' };
              if (!labels.has(result.label)) applications.push({ at: now(), by, result });
              labels.add(result.label);
              return result;
            },
            describe,
          ),
      };
    }
    case 'fenced': {
      const list = new CommentList();
      const highest = new Map<string, number>();
      const admit = (key: string, fence: number | undefined): void => {
        if (fence === undefined) throw new RemoteRefusedError('fenced remote: the request carries no fence');
        const seen = highest.get(key) ?? 0;
        if (fence < seen) throw new RemoteRefusedError(`fenced remote: fence ${fence} is older than ${seen}`);
        highest.set(key, fence);
      };
      return {
        kind,
        applications: list.applications,
        admits: new Set(),
        check: (call, key) =>
          call(
            'list comments',
            () => list.find(key),
            (r) => `found ${describe(r)}`,
          ),
        apply: async (call, key, by, fence) => {
          const found = await call(
            `read (fence ${fence})`,
            () => {
              admit(key, fence);
              return list.find(key);
            },
            (r) => `found ${describe(r)}`,
          );
          if (found !== undefined) return found;
          return call(
            `post comment (fence ${fence})`,
            () => {
              admit(key, fence);
              return list.post(key, by, now(), fence);
            },
            describe,
          );
        },
      };
    }
  }
}
