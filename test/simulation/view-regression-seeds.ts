import type { Violation } from './invariants.js';
import type { RegressionSeed } from './regression-seeds.js';
import type { SuiteName } from './suites.js';

// The conversation and stream suites' seeds. Found on 664da0a, before its fixes: the
// conversation store's in the i23-conv merge (a6e339d), the stream writer's budget and cursor
// validation in the i23-live merge (1049dc5), keyed streams, growing cursors and one close
// behaviour in the i23-stream merge (970eb92). The traces are abridged from 664da0a. Two stayed
// open after those merges: the zombie attempt's late close, fixed by the execution's write order
// (0aea3b7, traces abridged from 750551d), and the reset's late old branch, fixed when the page
// ordered executions by Temporal's start of each run (e18b47f).

/** Every bug the conversation and stream suites found, fixed. */
export const VIEW_REGRESSION_SEEDS: readonly RegressionSeed[] = [
  // 86 590 ms: the run's user message is edited in the store; P1 (no cache) loads step 1 and the
  // model is sent "forged: user" as the prompt.
  {
    suite: 'conversation',
    seed: 82,
    bug: 'issue 23 item 1 (an edited entry reaches the model)',
    foundOn: '664da0a',
    fixedIn: 'a6e339d',
  },
  // 10 741 ms: a forged tool message is planted under the key W1/E1 writes next; the insert's
  // DO NOTHING keeps it, and the next step on another worker sends it to the model.
  {
    suite: 'conversation',
    seed: 3488,
    bug: 'issue 23 item 1 (a row planted ahead of the writer wins)',
    foundOn: '664da0a',
    fixedIn: 'a6e339d',
  },
  // 762 960 ms: an entry's parent is pointed at another chain's entry; the client's
  // loadConversation returns a history with messages of the other branch.
  {
    suite: 'conversation',
    seed: 406,
    bug: 'issue 23 item 1 (a re-parented entry splices another history in)',
    foundOn: '664da0a',
    fixedIn: 'a6e339d',
  },
  // 466 703 ms: an entry's JSON is truncated; step 9's load fails with a bare SyntaxError.
  {
    suite: 'conversation',
    seed: 1,
    bug: 'issue 23 item 1 (a truncated entry fails without a named error)',
    foundOn: '664da0a',
    fixedIn: 'a6e339d',
  },
  // 487 705 ms: an entry is made its own parent; the memory store's walk never ends.
  {
    suite: 'conversation',
    seed: 13,
    bug: 'issue 23 item 2 (a parent cycle is walked forever, memory store)',
    foundOn: '664da0a',
    fixedIn: 'a6e339d',
  },
  // 13 635 ms: an entry's parent is pointed at a descendant; the SQLite walk of the client's read
  // never ends (the probe's child process is killed).
  {
    suite: 'conversation',
    seed: 21,
    bug: 'issue 23 item 2 (a parent cycle freezes the SQLite walk)',
    foundOn: '664da0a',
    fixedIn: 'a6e339d',
  },
  // W1 and W2 share run id run-1 and prompt; W2 waits for an approval while W1's executions
  // close; a prune one retention later deletes the entries of W2, still running.
  {
    suite: 'conversation',
    seed: 32,
    bug: 'issue 23 item 3 (another execution with the run id closes it)',
    foundOn: '664da0a',
    fixedIn: 'a6e339d',
  },
  // W1/E1 closes at 4 605 ms and is reset to step 0 (W1/E2); E1's zombie attempt of step 0 stores
  // its final answer at 36 818 ms, after E2's writes; a prune at 118 527 ms deletes E2's prompt.
  {
    suite: 'conversation',
    seed: 2106,
    bug: "issue 23 item 3 (a reset's old branch, landing late, closes the new one)",
    foundOn: '664da0a',
    fixedIn: 'a6e339d',
  },
  // W1/E1's step 0: A1 outlives its start-to-close timeout; A2 is taken (tool calls: the run goes
  // on) and stores its answer at 3 241 ms; A1 stores a final answer at 3 748 ms, closing W1/E1's
  // hold. W1 waits 2.5 h for an approval; a prune one retention (1 h) later deletes its entries,
  // and step 1 fails with ConversationEntryMissingError.
  {
    suite: 'conversation',
    seed: 4727,
    bug: "a zombie attempt's late final answer closes its own execution's hold on the conversation",
    foundOn: '664da0a',
    fixedIn: '0aea3b7',
  },
  // SQLite: W1/E1's step 0 A1 stores its final answer at 4 914 ms, after A2's answer and step 1's
  // (an older step, not only an older attempt); prunes from 678 s delete W1/E1's entries while it
  // waits for an approval.
  {
    suite: 'conversation',
    seed: 6633,
    bug: "the same, landing after the execution's next step (SQLite)",
    foundOn: '750551d',
    fixedIn: '0aea3b7',
  },
  // W2/E2 (a reset's new execution): step 2's A1 outlives its timeout, A2 is taken and goes on; A1's
  // final answer lands at 56 542 ms; a prune at 133 669 ms deletes W2/E2's entries and step 3 fails.
  {
    suite: 'conversation',
    seed: 8988,
    bug: "the same, in a reset's new execution",
    foundOn: '750551d',
    fixedIn: '0aea3b7',
  },
  // A black hole from 2 850 ms that never answers: every attempt's close of W2's step waits forever.
  {
    suite: 'stream',
    seed: 16,
    bug: 'issue 23 item 6 (a store that never answers holds the step)',
    foundOn: '664da0a',
    fixedIn: '1049dc5',
  },
  // Half the appends slow, failing or answered late: closes of 5-36 s.
  {
    suite: 'stream',
    seed: 6,
    bug: 'issue 23 item 6 (a slow store adds seconds to every step)',
    foundOn: '664da0a',
    fixedIn: '1049dc5',
  },
  // W1 waits longer than the retention; a prune deletes every batch; step 2's batches get cursors
  // 1-4 again, and both followers (at cursors 4 and 8) never see them.
  {
    suite: 'stream',
    seed: 108,
    bug: 'issue 23 item 7 (cursors restart after a prune; followers stall)',
    foundOn: '664da0a',
    fixedIn: '970eb92',
  },
  // W1 and W2 stream under run id run-1 at once: each reader reads the other's batches, and W1's
  // page shows W2's text and drops the rest of its own.
  {
    suite: 'stream',
    seed: 23,
    bug: 'issue 23 item 8 (another workflow with the run id blinds the reader)',
    foundOn: '664da0a',
    fixedIn: '970eb92',
  },
  // The same, two pages (runUIMessageStream) following W1.
  { suite: 'stream', seed: 62, bug: 'issue 23 item 8 (the same, on the page)', foundOn: '664da0a', fixedIn: '970eb92' },
  // readRunStream from "abc" reads nothing for 61 s, without a word.
  {
    suite: 'stream',
    seed: 185,
    bug: 'issue 23 item 10 (a forged cursor waits without a word)',
    foundOn: '664da0a',
    fixedIn: '1049dc5',
  },
  // The same for NaN, on the SQLite store.
  {
    suite: 'stream',
    seed: 68,
    bug: 'issue 23 item 10 (the same, NaN on SQLite)',
    foundOn: '664da0a',
    fixedIn: '1049dc5',
  },
  // readRunStream from -1 before the first batch: every wait answers at once (0 > -1) and every
  // read finds nothing, a busy loop on promise callbacks that never yields to the event loop.
  {
    suite: 'stream',
    seed: 84,
    bug: 'readRunStream from -1 busy-loops before the first batch (found by the simulator)',
    foundOn: '664da0a',
    fixedIn: '1049dc5',
  },
  // The process closes the memory store at 7 593 ms; the page waits on until its run ends.
  {
    suite: 'stream',
    seed: 231,
    bug: 'issue 23 item 11 (closing the memory store leaves readers waiting)',
    foundOn: '664da0a',
    fixedIn: '970eb92',
  },
  // W1 is reset while step 0 streams; the old branch's attempt writes on. The page reads W1/E2's
  // first batch (cursor 1) before W1/E1's (cursor 2): RunStreamUIState took E1 for a newer
  // execution, passed E2, and dropped the rest of E2's text.
  {
    suite: 'stream',
    seed: 676,
    bug: "a reset's old branch whose first batch lands after the new execution's blinds the page to the new one",
    foundOn: '664da0a',
    fixedIn: 'e18b47f',
  },
  // The same for W2, reset while its step 1 streams (the old branch's first batch at 13 346 ms),
  // on a page (P1) that resumed from a cursor.
  {
    suite: 'stream',
    seed: 150,
    bug: "the same, a reset's old branch landing late at step 1",
    foundOn: '664da0a',
    fixedIn: 'e18b47f',
  },
];

/** A bug the simulator found that is not fixed yet: its seed fails, and fresh seeds that meet it are told apart. */
export interface OpenFinding extends Omit<RegressionSeed, 'fixedIn'> {
  readonly suite: SuiteName;
  readonly invariant: string;
  /** What its violations' messages say (fresh seeds that break only this are not a new regression). */
  readonly signature: RegExp;
}

/** Bugs the simulator found that are still open (none today; a new one is listed here until it is fixed). */
export const OPEN_FINDINGS: readonly OpenFinding[] = [];

/** The open finding a violation of `suite` is an instance of, if any. */
export function openFindingOf(suite: SuiteName, v: Violation): OpenFinding | undefined {
  return OPEN_FINDINGS.find((f) => f.suite === suite && f.invariant === v.invariant && f.signature.test(v.message));
}
