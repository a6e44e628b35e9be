import type { SuiteName } from './suites.js';
import { VIEW_REGRESSION_SEEDS } from './view-regression-seeds.js';

/** A seed whose history once broke an invariant, and what it found. */
export interface RegressionSeed {
  /** The suite whose history it is (default: the effect protocol's). */
  readonly suite?: SuiteName;
  readonly seed: number;
  /** The bug, as the issue that fixed it names it. */
  readonly bug: string;
  /** The commit the simulator found it on. */
  readonly foundOn: string;
  /** The commit that fixed it. */
  readonly fixedIn: string;
}

/**
 * Every bug the simulator found, as the seed that found it (`npm run sim -- [--suite NAME] --seed
 * S --verbose` replays its history on today's code). test/simulation/regression.test.ts expects
 * each to be clean. The traces below are abridged from the code the bug was found on.
 */
export const REGRESSION_SEEDS: readonly RegressionSeed[] = [
  // The effect protocol's, then the conversation and stream suites'.
  // Found on 37b5526 (before its fixes, bcca2e0), marker remote:
  //      18 ms  P1/A1  execute starts                      (998 ms, ignores its signal)
  //     400 ms  P1/A1  signal aborts (start-to-close timeout)   -> the keeper stops renewing
  //     481 ms  P2/A2  store.claim → acquired (fence 2, takeover)
  //     490 ms  P2/A2  remote.list comments → found nothing
  //     648 ms  P2/A2  remote.post comment → {"commentId":1}
  //    1019 ms  P1/A1  remote.post comment → {"commentId":2}
  {
    seed: 1425,
    bug: 'issue 12 item 1 (a timed-out execute that ignores its signal applies twice)',
    foundOn: '37b5526',
    fixedIn: 'bcca2e0',
  },
  // Found on 37b5526, marker remote: run 1 cancelled at 567 ms while A1's execute (2.5 s, ignoring
  // its signal) runs; the rerun's A4 takes the key over at 1493 ms and posts comment 1 at 1541 ms,
  // then A1 posts comment 2 at 2845 ms.
  {
    seed: 6395,
    bug: 'issue 12 item 1 (a cancelled execute that ignores its signal applies twice after the rerun)',
    foundOn: '37b5526',
    fixedIn: 'bcca2e0',
  },
  // Found on 37b5526, marker remote:
  //     234 ms  P2/A2  store.claim → acquired (fence 2, takeover)  (A1 timed out, still executing)
  //     241 ms  P2/A2  remote.list comments → found nothing        (then 69 ms more in alreadyApplied)
  //     274 ms  P1/A1  remote.post comment → {"commentId":1}
  //     281 ms  P1/A1  store.put {"commentId":1} → stored          (ends A2's live claim)
  //     311 ms  P2/A2  execute starts                              (young lease: no round trip)
  //     334 ms  P2/A2  remote.post comment → {"commentId":2}
  {
    seed: 14111,
    bug: 'issue 12 item 2 (a first-writer-wins put ends a live claim; the last check skips it)',
    foundOn: '37b5526',
    fixedIn: 'bcca2e0',
  },
  // Found on 37b5526, marker remote:
  //       2 ms  P2/A1  store.claim → acquired (fence 1, lease until 402 ms)
  //      89 ms  world  wall clock steps back 881 ms                (the keeper stops renewing: Date.now)
  //     419 ms  P2/A1  execute starts                              (lease ran out at 402 ms; looks young)
  //     612 ms  P1/A2  store.claim → acquired (fence 2, takeover)
  //     764 ms  P2/A1  remote.post comment → {"commentId":1}
  //    1263 ms  P1/A2  remote.post comment → {"commentId":2}
  {
    seed: 54594,
    bug: 'issue 12 item 3 (lease age from a wall clock stepped back)',
    foundOn: '37b5526',
    fixedIn: 'bcca2e0',
  },
  // Found on 37b5526: A1's execute hangs (ignoring its signal); A2, the retry on the same worker,
  // waits for the identical call in flight forever, past its busy wait and its own abort.
  {
    seed: 12,
    bug: 'issue 12 item 10 (an identical call in flight in the process is awaited without bound)',
    foundOn: '37b5526',
    fixedIn: 'bcca2e0',
  },
  // Found on 791ad6c (after the fixes), set remote: A3's last check (a read, fence 3) arrives at
  // 524 ms and its answer stalls; A1, paused past its lease, records with put at 555 ms; A3's
  // lease keeper learns "lost (record by A1)" at 556 ms; the read's answer (no record) arrives and
  // A3 executes at 785 ms anyway. The protocol knew, and applied again.
  {
    seed: 2922,
    bug: 'a loss the lease keeper saw during the last check does not stop the effect',
    foundOn: '791ad6c',
    fixedIn: '14c1bdd',
  },
  // Found on 791ad6c, set remote: the same (A3's read stalls; A1's put at 379 ms; the keeper sees
  // the loss at 392 ms; A3 executes at 458 ms).
  {
    seed: 76611,
    bug: 'a loss the lease keeper saw during the last check does not stop the effect (2)',
    foundOn: '791ad6c',
    fixedIn: '14c1bdd',
  },
  // Found on 14c1bdd, marker remote: A1's renewal at 1335 ms is lost; the keeper sends none while
  // one is pending, so A1's lease ends at 1840 ms with A1 alive and still executing; A2 takes over
  // at 1850 ms and posts comment 1 at 1872 ms; A1 posts comment 2 at 2352 ms.
  {
    seed: 11805,
    bug: 'one lost renewal lets a live attempt lose its lease (the keeper waited for its answer forever)',
    foundOn: '14c1bdd',
    fixedIn: '66210af',
  },
  ...VIEW_REGRESSION_SEEDS,
];
