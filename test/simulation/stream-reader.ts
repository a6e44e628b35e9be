import { readRunStream } from '../../src/stream/read-run-stream.js';
import type { RunStreamBatch } from '../../src/stream/run-stream-store.js';
import { streamOf, tokensIn, type CommittedBatch } from './stream-ledger.js';
import { type StreamReaderPlan, showCursor } from './stream-scenario.js';
import { PAGE_CLOSED, type StreamWorld, type WorkflowRecord } from './stream-world.js';

/** One session of a reader: a `readRunStream` from a cursor until the page closes or the run ends. */
export interface ReaderSession {
  readonly startedAt: number;
  endedAt?: number;
  /** The cursor it was given. */
  readonly from: unknown;
  readonly forged: boolean;
  /** The commit it resumes after (-1: from the start): every batch of its run committed later is owed. */
  readonly after: number;
  /** Commits of the run still stored when it began (the others were pruned before it could read them). */
  readonly storedAtStart: ReadonlySet<number>;
  /**
   * The batches stored at or before its cursor when it began: what a page that resumes has
   * already shown (`runUIMessageStream` rebuilds its view from them, silently).
   */
  readonly before: readonly RunStreamBatch[];
  /**
   * What it read, in order, each batch matched to its commit (undefined: a batch nobody committed);
   * `again` when this reader had read that commit already.
   */
  readonly read: Array<{
    readonly batch: RunStreamBatch;
    readonly commit: CommittedBatch | undefined;
    readonly again: boolean;
  }>;
  error?: { readonly error: unknown };
}

/** How long an idle reader waits before asking `until` again, virtual ms. */
const CHECK_EVERY_MS = 60_000;

/**
 * A page following one workflow's stream with the real `readRunStream`: from the start, after a
 * cursor of a batch committed by then, or from a forged cursor; the page may close and resume
 * after the last cursor it handled (sometimes after more than the retention).
 */
export class StreamReader {
  readonly sessions: ReaderSession[] = [];
  private readonly matched = new Set<number>();

  constructor(
    private readonly world: StreamWorld,
    readonly plan: StreamReaderPlan,
    readonly follows: WorkflowRecord,
  ) {}

  start(): void {
    // A page opens a run that was started (describe knows no workflow before that).
    const at = Math.max(this.plan.startAt, this.follows.startedAt);
    this.world.clock.at(at, () => this.world.track(this.follow()));
  }

  private async follow(): Promise<void> {
    const { clock, ledger } = this.world;
    let from: unknown = 0;
    let after = -1;
    if (this.plan.from.kind === 'forged') from = this.plan.from.value;
    if (this.plan.from.kind === 'cursor') {
      const committed = ledger.batches.filter((b) => streamOf(b.ref) === streamOf(this.follows));
      const pick = committed[Math.floor(this.plan.from.pick * committed.length)];
      if (pick !== undefined) [from, after] = [pick.cursor, pick.index];
    }
    for (let i = 0; ; i++) {
      const pause = this.plan.breaks[i];
      const session = await this.session(from, after, this.plan.from.kind === 'forged' && i === 0, pause?.at);
      if (session.error !== undefined || session.forged || pause === undefined || this.world.ended.aborted) return;
      await clock.sleep(pause.pauseMs);
      const last = session.read.at(-1);
      if (last !== undefined) [from, after] = [last.batch.cursor, last.commit?.index ?? after];
    }
  }

  private async session(
    from: unknown,
    after: number,
    forged: boolean,
    endAt: number | undefined,
  ): Promise<ReaderSession> {
    const { clock, trace, backend, ledger, store } = this.world;
    const runId = this.follows.runId;
    const stored = new Set<number>();
    const before: RunStreamBatch[] = [];
    for (const batch of await backend.stored(this.follows)) {
      for (const commit of ledger.commitsOf(tokensIn(batch.parts))) stored.add(commit.index);
      if (typeof from === 'number' && batch.cursor <= from) before.push(batch);
    }
    const session: ReaderSession = {
      startedAt: clock.now(),
      from,
      forged,
      after,
      storedAtStart: stored,
      before,
      read: [],
    };
    this.sessions.push(session);
    const who = `${this.plan.name}`;
    trace.log(who, `reads ${runId} from cursor ${showCursor(from)}`);
    const stop = new AbortController();
    if (endAt !== undefined) clock.at(endAt, () => stop.abort(PAGE_CLOSED));
    const end = (): void => stop.abort(PAGE_CLOSED);
    this.world.ended.addEventListener('abort', end, { once: true });
    try {
      const batches = readRunStream({
        store,
        runId,
        workflowId: this.follows.workflowId,
        firstExecutionRunId: this.follows.firstExecutionRunId,
        from: from as number,
        signal: stop.signal,
        until: () => this.world.writersDone(),
        checkEveryMs: CHECK_EVERY_MS,
      });
      for await (const batch of batches) session.read.push({ batch, ...this.match(batch) });
    } catch (error) {
      session.error = { error };
      trace.log(who, `stopped: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.world.ended.removeEventListener('abort', end);
    }
    session.endedAt = clock.now();
    trace.log(who, `session ends after ${session.read.length} batches`);
    return session;
  }

  /** The commit of a batch read: the first with its tokens this reader has not matched yet (else the last it did). */
  private match(batch: RunStreamBatch): { commit: CommittedBatch | undefined; again: boolean } {
    const commits = this.world.ledger.commitsOf(tokensIn(batch.parts));
    // The same parts committed twice (an answer lost, the parts sent again) differ by cursor.
    const commit =
      commits.find((c) => !this.matched.has(c.index) && c.cursor === batch.cursor) ??
      commits.find((c) => !this.matched.has(c.index));
    if (commit === undefined) return { commit: commits.at(-1), again: commits.length > 0 };
    this.matched.add(commit.index);
    return { commit, again: false };
  }
}
