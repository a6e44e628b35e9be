import type { JsonMessage } from '../../common/index.js';
import { ChamviError } from '../../src/errors/chamvi-error.js';
import type { RawEntry } from './conversation-backend.js';
import { firstDifference, sameJson } from './conversation-messages.js';
import type { Violation } from './invariants.js';
import type { Trace } from './trace.js';
import { RunawayWalkError } from './walk-guard.js';

/** What the judge needs to know of an execution. */
export interface JudgedExecution {
  readonly id: string;
  readonly runId: string;
  /** Running, and the store has a write of it: its entries must never be pruned. */
  readonly open: boolean;
  /** The keys of its stored conversation, the run's first message first. */
  readonly keys: readonly string[];
}

/** What a load answered: the messages, or the error it threw. */
export type LoadOutcome = { readonly messages: readonly unknown[] } | { readonly error: unknown };

/**
 * The conversation invariants, checked as the history runs:
 * - **history-genuine**: a load (the model step's, a tool call's `options.messages`, the client's
 *   `loadConversation`) returns exactly the messages the run's own steps wrote, or throws; never
 *   other content (an edited, planted or re-parented row, another execution's entries);
 * - **named-error**: what a load throws is one of the library's named errors (a `ChamviError`);
 * - **chain-walk-bounded**: a load ends, whatever the parent links (a cycle);
 * - **no-false-alarm**: a load of a chain that nobody tampered with and nothing pruned succeeds;
 * - **open-never-pruned**: a prune never deletes an entry of an execution that is running and has written.
 */
export class ConversationJudge {
  readonly violations: Violation[] = [];
  /** Keys whose rows were tampered with (edited, planted, deleted, re-parented). */
  readonly touched = new Set<string>();
  private readonly reportedOpen = new Set<string>();

  constructor(private readonly trace: Trace) {}

  /**
   * Judges one load by `who` of a conversation whose genuine messages are `expected`, stored as the
   * chain `keys` (the messages after it are pending). `rows` reads the store's rows as they were
   * when it was called (nothing runs between a load and its judgement but its own promise callbacks).
   */
  load(
    who: string,
    expected: readonly JsonMessage[],
    keys: readonly string[],
    rows: () => ReadonlyMap<string, RawEntry>,
    outcome: LoadOutcome,
  ): void {
    const tampered = keys.some((k) => this.touched.has(k));
    if ('messages' in outcome) {
      if (sameJson(outcome.messages, expected)) return;
      this.fail(
        'history-genuine',
        `${who} got a history its run never wrote: ${firstDifference(outcome.messages, expected)}${tampered ? ' (a row of the chain was tampered with)' : ''}`,
      );
      return;
    }
    const error = outcome.error;
    if (error instanceof RunawayWalkError) {
      this.fail('chain-walk-bounded', `${who}: ${error.message}`);
      return;
    }
    if (!ChamviError.isInstance(error)) {
      this.fail('named-error', `${who} threw an unnamed error: ${describe(error)}`);
      return;
    }
    if (tampered) return;
    const stored = rows();
    const missing = keys.filter((k) => !stored.has(k));
    // A missing entry of an open execution is the prune's violation (reported when it pruned).
    if (missing.length > 0) return;
    this.fail('no-false-alarm', `${who} was refused an intact, unpruned history: ${describe(error)}`);
  }

  /**
   * Judges an append that threw: a named error, and only when a key it writes was tampered with
   * (a row planted or edited under it); an append of genuine entries to an untouched store succeeds.
   */
  append(who: string, keys: readonly string[], error: unknown): void {
    if (!ChamviError.isInstance(error)) {
      this.fail('named-error', `${who}'s append threw an unnamed error: ${describe(error)}`);
      return;
    }
    if (keys.some((k) => this.touched.has(k))) return;
    this.fail(
      'no-false-alarm',
      `${who}'s append of genuine entries to an untouched store was refused: ${describe(error)}`,
    );
  }

  /** A load that would never have ended (the SQLite walk of a cycle, probed in a child process). */
  hang(who: string, why: string): void {
    this.fail('chain-walk-bounded', `${who}: ${why}`);
  }

  /**
   * Judges a prune that deleted rows: every entry of an open execution's chain is still there
   * (tampered rows aside). An entry of it can only have gone missing before through tampering or
   * an earlier prune (reported then), so the rows after the prune say it all.
   */
  prune(
    after: ReadonlyMap<string, RawEntry>,
    executions: readonly JudgedExecution[],
    closedBy: (id: string, runId: string) => string,
  ): void {
    for (const e of executions) {
      if (!e.open || this.reportedOpen.has(e.id)) continue;
      const pruned = e.keys.filter((k) => !after.has(k) && !this.touched.has(k));
      const first = pruned[0];
      if (first === undefined) continue;
      this.reportedOpen.add(e.id);
      this.fail(
        'open-never-pruned',
        `a prune deleted ${pruned.length} of the ${e.keys.length} entries of ${e.id} (run ${e.runId}), which is running (first: ${first}; ${closedBy(e.id, e.runId)})`,
      );
    }
  }

  private fail(invariant: string, message: string): void {
    this.violations.push({ invariant, message });
    this.trace.log('judge', `VIOLATION ${invariant}: ${message}`);
  }
}

export function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message.slice(0, 160)}`;
  return String(error);
}
