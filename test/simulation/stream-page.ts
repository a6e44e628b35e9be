import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { UIMessageChunk } from 'ai';
import { runUIMessageStream } from '../../worker/stream/run-ui-message-stream.js';
import { streamOf, tokensIn } from './stream-ledger.js';
import { type StreamReaderPlan, showCursor } from './stream-scenario.js';
import { PAGE_CLOSED, type StreamWorld, type WorkflowRecord } from './stream-world.js';

/** One visit of a page: a `runUIMessageStream` from a cursor until the page closes or the run ends. */
export interface PageSession {
  readonly startedAt: number;
  endedAt?: number;
  readonly from: unknown;
  readonly forged: boolean;
  /** The commit it resumes after (-1: from the start). */
  readonly after: number;
  /** Commits of the run still stored when it began. */
  readonly storedAtStart: ReadonlySet<number>;
  readonly chunks: UIMessageChunk[];
}

/** How often the page's run watcher asks the (simulated) server, virtual ms. */
const PAGE_POLL_MS = 5000;

/**
 * A chat page following one workflow with the real `runUIMessageStream` (what a route serves
 * `useChat`), over a stand-in Temporal client whose `describe` tells the workflow's status as the
 * simulation knows it: from the start, after a cursor, or from a forged cursor; when the page
 * closes, it comes back with the last `data-chamvi-cursor` it got as `from`, appending to the
 * message it has (AI SDK's resume).
 */
export class PageReader {
  readonly sessions: PageSession[] = [];

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
    let from: unknown;
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
      const ended = session.chunks.some((c) => c.type === 'finish' || c.type === 'error' || c.type === 'abort');
      if (ended || session.forged || pause === undefined || this.world.ended.aborted) return;
      await clock.sleep(pause.pauseMs);
      const marker = session.chunks.findLast((c) => c.type === 'data-chamvi-cursor');
      if (marker !== undefined) {
        const cursor = (marker as { data: { cursor: number } }).data.cursor;
        const commit = ledger.batches.findLast(
          (b) => streamOf(b.ref) === streamOf(this.follows) && b.cursor === cursor,
        );
        [from, after] = [cursor, commit?.index ?? after];
      }
    }
  }

  private async session(
    from: unknown,
    after: number,
    forged: boolean,
    endAt: number | undefined,
  ): Promise<PageSession> {
    const { clock, trace, backend, ledger, store } = this.world;
    const stored = new Set<number>();
    for (const batch of await backend.stored(this.follows)) {
      for (const commit of ledger.commitsOf(tokensIn(batch.parts))) stored.add(commit.index);
    }
    const session: PageSession = { startedAt: clock.now(), from, forged, after, storedAtStart: stored, chunks: [] };
    this.sessions.push(session);
    trace.log(
      this.plan.name,
      `page opens ${this.follows.name}${from === undefined ? '' : ` from cursor ${showCursor(from)}`}`,
    );
    const stop = new AbortController();
    if (endAt !== undefined) clock.at(endAt, () => stop.abort(PAGE_CLOSED));
    const end = (): void => stop.abort(PAGE_CLOSED);
    this.world.ended.addEventListener('abort', end, { once: true });
    const stream = runUIMessageStream({
      client: standInClient(this.follows),
      workflowId: this.follows.workflowId,
      stream: store,
      runId: this.follows.runId,
      ...(from === undefined ? {} : { from: from as number }),
      signal: stop.signal,
      pollMs: PAGE_POLL_MS,
      progressParts: false,
    });
    const reader = stream.getReader();
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) session.chunks.push(next.value);
    } finally {
      this.world.ended.removeEventListener('abort', end);
    }
    session.endedAt = clock.now();
    const last = session.chunks.at(-1);
    trace.log(this.plan.name, `page closes after ${session.chunks.length} chunks (last: ${last?.type ?? 'none'})`);
    return session;
  }
}

/**
 * A Temporal client that knows one workflow: `describe` tells its current execution's status (or,
 * for a handle with a run id, that execution's: its start time, when a reset began it), `result` a
 * completed run's output. A run id it does not know is not found, as Temporal answers.
 */
function standInClient(workflow: WorkflowRecord): Client {
  const describe = (runId: string | undefined): Promise<unknown> => {
    const execution = runId ?? workflow.executions.at(-1);
    const startedAt = execution === undefined ? undefined : workflow.executionStarts.get(execution);
    if (execution === undefined || startedAt === undefined)
      return Promise.reject(new WorkflowNotFoundError('workflow not found', workflow.workflowId, runId));
    const current = execution === workflow.executions.at(-1);
    return Promise.resolve({
      status: { name: current ? workflow.status : 'TERMINATED' },
      runId: execution,
      startTime: new Date(startedAt),
      raw: { workflowExecutionInfo: { firstRunId: workflow.executions[0] ?? '' } },
    });
  };
  const result = (): Promise<unknown> =>
    workflow.status === 'FAILED'
      ? Promise.reject(new Error('the model step kept failing'))
      : Promise.resolve({ steps: [{ finishReason: 'stop' }], effects: [] });
  const handle = (_workflowId: string, runId?: string) => ({
    describe: () => describe(runId),
    result,
    query: () => Promise.resolve(undefined),
  });
  return {
    workflow: { getHandle: handle },
    withAbortSignal: <T>(_signal: AbortSignal, fn: () => Promise<T>): Promise<T> => fn(),
  } as unknown as Client;
}
