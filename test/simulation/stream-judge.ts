import { showCursor } from './stream-scenario.js';
import { ChamviError } from '../../src/errors/chamvi-error.js';
import { RunStreamUIState } from '../../src/stream/ui-chunks.js';
import { SpinningReaderError } from './faulty-stream-store.js';
import type { Violation } from './invariants.js';
import { PageModel } from './page-model.js';
import { streamOf, tokensIn, workflowOf, type CommittedBatch } from './stream-ledger.js';
import { PageReader } from './stream-page.js';
import { judgePageReader } from './stream-page-judge.js';
import type { ReaderSession, StreamReader } from './stream-reader.js';
import type { StreamWorld, WorkflowRecord } from './stream-world.js';

/** How soon a waiting reader must be released once its store is closed, virtual ms. */
const CLOSE_RELEASES_MS = 1000;

/**
 * The run stream invariants, after the history:
 * - **cursors-only-grow**: the store never gives a run a cursor at or below one it gave before,
 *   and a reader never reads a cursor at or below one it read;
 * - **reader-sees-every-batch**: a reader reads every batch of its run's workflow committed after
 *   the cursor it started from while it read (or stored when it began): nothing is lost, after a
 *   prune included;
 * - **reader-once-in-order**: ... each once, in the order they were committed;
 * - **reader-sees-only-its-run**: ... and no batch of another workflow that shares the run id;
 * - **forged-cursor-refused**: a reader given a cursor no store gives (NaN, -1, a string, a
 *   fraction, Infinity) fails with a clear error and reads nothing;
 * - **page-shows-its-run** / **page-shows-every-batch** / **page-no-duplicates**: the page built
 *   from what it read (`RunStreamUIState`) shows nothing of another workflow, every part of the
 *   attempts Temporal took that it read before anything later of its workflow, each once (a part
 *   whose commit lost its answer and was sent again is counted as documented, {@link LOST_ANSWER_RESENT});
 * - **reader-never-spins**: a reader waiting for its next batch never busy-loops (a wait that
 *   answers at once while the read finds nothing, forever, freezes the process);
 * - **close-releases-readers**: once the store is closed, every reader's session ends within a second;
 * - **step-latency-bounded**: a step attempt's `close` returns within the documented budget,
 *   whatever the store does; **one-warning**: a writer warns at most once.
 */
export function judgeStreams(world: StreamWorld, readers: ReadonlyArray<StreamReader | PageReader>): Violation[] {
  const violations: Violation[] = [];
  const fail = (invariant: string, message: string): void => void violations.push({ invariant, message });
  const shrunk = new Set<string>();
  for (const s of world.ledger.shrunk) {
    if (shrunk.has(s.stream)) continue;
    shrunk.add(s.stream);
    fail(
      'cursors-only-grow',
      `stream ${s.stream}: an append at ${s.at} ms got cursor ${s.cursor} after cursor ${s.before}`,
    );
  }
  for (const c of world.closes) {
    const took = c.endedAt === undefined ? undefined : c.endedAt - c.startedAt;
    if (took === undefined || took > world.budgetMs) {
      fail(
        'step-latency-bounded',
        `${c.who}: the stream writer's close ${took === undefined ? 'never returned' : `took ${took} ms`} (budget ${world.budgetMs} ms)`,
      );
    }
    if (c.warnings > 1) fail('one-warning', `${c.who}: the stream writer warned ${c.warnings} times`);
  }
  for (const reader of readers) {
    violations.push(...(reader instanceof PageReader ? judgePageReader(world, reader) : judgeReader(world, reader)));
  }
  return violations;
}

function judgeReader(world: StreamWorld, reader: StreamReader): Violation[] {
  const out: Violation[] = [];
  const name = `${reader.plan.name} (following ${reader.follows.name})`;
  const fail = (invariant: string, message: string): void =>
    void out.push({ invariant, message: `${name}: ${message}` });
  const own = reader.follows.name;
  let lastIndex = -1;
  let lastCursor = Number.NEGATIVE_INFINITY;
  const reported = new Set<string>();
  const once = (invariant: string, message: string): void => {
    if (reported.has(invariant)) return;
    reported.add(invariant);
    fail(invariant, message);
  };
  const closed = world.closedAt;
  for (const session of reader.sessions) {
    const by = closed === undefined ? undefined : Math.max(closed, session.startedAt) + CLOSE_RELEASES_MS;
    if (by !== undefined && (session.endedAt ?? Number.POSITIVE_INFINITY) > by) {
      once(
        'close-releases-readers',
        `the session from cursor ${showCursor(session.from)} ${session.endedAt === undefined ? 'was still waiting at the end' : `ended at ${session.endedAt} ms`}, although the store was closed at ${closed} ms`,
      );
    }
    if (session.error?.error instanceof SpinningReaderError) {
      once('reader-never-spins', `from cursor ${showCursor(session.from)}: ${session.error.error.message}`);
    }
    if (session.forged) {
      judgeForged(session, fail);
      continue;
    }
    for (const { batch, commit, again } of session.read) {
      if (commit === undefined || commit.workflow !== own) {
        const whose = commit === undefined ? 'a batch nobody committed' : `a batch of ${commit.ref.execution}`;
        once('reader-sees-only-its-run', `read ${whose} (cursor ${batch.cursor})`);
      } else {
        if (again) once('reader-once-in-order', `read commit #${commit.index} (cursor ${batch.cursor}) again`);
        else if (commit.index < lastIndex)
          once('reader-once-in-order', `read commit #${commit.index} after #${lastIndex}`);
        lastIndex = Math.max(lastIndex, commit.index);
      }
      if (batch.cursor <= lastCursor)
        once('cursors-only-grow', `read cursor ${batch.cursor} after cursor ${lastCursor}`);
      lastCursor = Math.max(lastCursor, batch.cursor);
    }
    const got = new Set(session.read.flatMap((r) => (r.commit === undefined ? [] : [r.commit.index])));
    const lost = owed(world, reader.follows, session).filter((b) => !got.has(b.index));
    const first = lost[0];
    if (first !== undefined) {
      once(
        'reader-sees-every-batch',
        `the session from cursor ${showCursor(session.from)} (${session.startedAt}-${session.endedAt ?? '?'} ms) never read ${lost.length} batches of its run, first #${first.index} (cursor ${first.cursor}, committed at ${first.at} ms)`,
      );
    }
  }
  judgePage(world, reader, once);
  return out;
}

/** What {@link owed} needs of a session (a reader's or a page's). */
export interface OwingSession {
  readonly startedAt: number;
  readonly endedAt?: number;
  readonly after: number;
  readonly storedAtStart: ReadonlySet<number>;
}

/**
 * The batches a session must read: its workflow's, committed after its start point, stored when
 * it began or committed while it read (before the store was closed).
 */
export function owed(world: StreamWorld, follows: WorkflowRecord, session: OwingSession): CommittedBatch[] {
  const end = Math.min(session.endedAt ?? Number.POSITIVE_INFINITY, world.closedAt ?? Number.POSITIVE_INFINITY);
  return world.ledger.batches.filter(
    (b) =>
      streamOf(b.ref) === streamOf(follows) &&
      b.workflow === follows.name &&
      b.index > session.after &&
      (session.storedAtStart.has(b.index) || b.at > session.startedAt) &&
      b.at < end,
  );
}

function judgeForged(session: ReaderSession, fail: (invariant: string, message: string) => void): void {
  const error = session.error?.error;
  const clear =
    ChamviError.isInstance(error) ||
    ((error instanceof RangeError || error instanceof TypeError) && /from|cursor/i.test(error.message));
  if (clear && session.read.length === 0) return;
  const what =
    session.read.length > 0
      ? `read ${session.read.length} batches`
      : error === undefined
        ? `ended without an error after ${(session.endedAt ?? 0) - session.startedAt} ms`
        : `failed with ${error instanceof Error ? `${error.name}: ${error.message}` : JSON.stringify(error)}`;
  fail('forged-cursor-refused', `given the cursor ${showCursor(session.from)} it ${what}`);
}

/**
 * The page the reader's batches make (all its sessions, as a page that kept its state), ordering
 * executions as `runUIMessageStream` does: by their start as Temporal tells it.
 */
function judgePage(world: StreamWorld, reader: StreamReader, once: (invariant: string, message: string) => void): void {
  const ui = new RunStreamUIState(undefined, (execution) => reader.follows.executionStarts.get(execution));
  const page = new PageModel();
  const own = reader.follows.name;
  const owedText = new Set<string>();
  const readOwn: CommittedBatch[] = [];
  for (const [i, session] of reader.sessions.entries()) {
    if (session.forged) continue;
    // As `runUIMessageStream` does for a page that resumes: the view is rebuilt up to the cursor.
    for (const batch of i === 0 ? session.before : []) {
      ui.batch(batch);
      const commit = world.ledger.commitsOf(tokensIn(batch.parts))[0];
      if (commit !== undefined && commit.workflow === own) readOwn.push(commit);
    }
    const due = new Set(owed(world, reader.follows, session).map((b) => b.index));
    for (const { batch, commit } of session.read) {
      for (const chunk of ui.batch(batch)) page.apply(chunk);
      if (commit === undefined || commit.workflow !== own) continue;
      const { ref } = commit;
      const overtaken = readOwn.some((c) => later(reader.follows.executions, c, commit));
      readOwn.push(commit);
      const taken = reader.follows.taken.has(`${ref.execution}/s${ref.step}/a${ref.attempt}`);
      if (taken && !overtaken && due.has(commit.index)) for (const t of commit.textTokens) owedText.add(t);
    }
  }
  for (const chunk of ui.endStep()) page.apply(chunk);
  const owedNow = withoutShownBefore(world, reader.follows, reader.sessions[0], owedText);
  judgeShown(world, page.tokens(), own, owedNow, once);
}

/**
 * `owedText` without the tokens of the commits up to where the page began: a page that starts
 * after a cursor shows them already (the same parts committed again, their first answer lost, are
 * not owed twice).
 */
export function withoutShownBefore(
  world: StreamWorld,
  follows: WorkflowRecord,
  first: { readonly after: number } | undefined,
  owedText: ReadonlySet<string>,
): Set<string> {
  const had = new Set(
    world.ledger.batches
      .filter((b) => b.index <= (first?.after ?? -1) && streamOf(b.ref) === streamOf(follows))
      .flatMap((b) => b.textTokens),
  );
  return new Set([...owedText].filter((t) => !had.has(t)));
}

/** The page's tokens: nothing of another workflow, nothing twice, every part it owes. */
export function judgeShown(
  world: StreamWorld,
  shown: readonly string[],
  own: string,
  owedText: ReadonlySet<string>,
  once: (invariant: string, message: string) => void,
): void {
  const foreign = shown.find((t) => workflowOf(t) !== own);
  if (foreign !== undefined) once('page-shows-its-run', `the page shows ${foreign}, written by another workflow`);
  const counts = new Map<string, number>();
  for (const t of shown) counts.set(t, (counts.get(t) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1);
  const unexplained = twice.find(([t]) => !resent(world, t));
  if (unexplained !== undefined) {
    once('page-no-duplicates', `the page shows ${unexplained[0]} ${unexplained[1]} times`);
  } else if (twice.length > 0) {
    world.documented[LOST_ANSWER_RESENT] = (world.documented[LOST_ANSWER_RESENT] ?? 0) + 1;
  }
  const missing = [...owedText].filter((t) => !counts.has(t));
  if (missing.length > 0) {
    once(
      'page-shows-every-batch',
      `the page lacks ${missing.length} parts of its run's taken attempts, first ${missing[0]}`,
    );
  }
}

/**
 * The documented cause of a part shown twice: the store committed a batch and its answer was lost
 * (a connection reset after the commit), so the writer, which saw a failed write, sent its parts
 * again with the next one (writes are at least once; README, Streaming, "Not guaranteed").
 */
export const LOST_ANSWER_RESENT = 'lost-answer-resent';

/** Whether `token` is on the page twice because a commit of it lost its answer and the parts went again. */
function resent(world: StreamWorld, token: string): boolean {
  const commits = world.ledger.batches.filter((b) => b.tokens.includes(token));
  return commits.length > 1 && commits.slice(0, -1).some((b) => b.answerLost);
}

/** Whether commit `c` comes after `b` in the workflow's stream: a later execution, step or attempt. */
export function later(executions: readonly string[], c: CommittedBatch, b: CommittedBatch): boolean {
  const [x, y] = [executions.indexOf(c.ref.execution), executions.indexOf(b.ref.execution)];
  return (
    x > y || (x === y && (c.ref.step > b.ref.step || (c.ref.step === b.ref.step && c.ref.attempt > b.ref.attempt)))
  );
}
