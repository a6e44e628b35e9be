import { showCursor } from './stream-scenario.js';
import type { Violation } from './invariants.js';
import { PageModel } from './page-model.js';
import { judgeShown, later, owed, withoutShownBefore } from './stream-judge.js';
import { streamOf } from './stream-ledger.js';
import type { PageReader, PageSession } from './stream-page.js';
import type { StreamWorld } from './stream-world.js';

/** How soon a page must be released once its store is closed, virtual ms. */
const CLOSE_RELEASES_MS = 1000;

/**
 * The invariants of a page following a run with `runUIMessageStream`, over all its visits (a page
 * that comes back with `from` appends to the message it has):
 * - **page-resumes-exactly**: a first visit begins with `start`; a visit with `from` sends no `start`;
 * - **cursors-only-grow**: the `data-chamvi-cursor` parts only grow, across visits too;
 * - **forged-cursor-refused**: a visit with a cursor no store gives gets an `error` chunk and no text;
 * - **reader-never-spins**, **close-releases-readers**, and the page's tokens (**page-shows-its-run**,
 *   **page-no-duplicates**, **page-shows-every-batch**: every part of the attempts Temporal took,
 *   committed while the page followed, before anything later of its workflow was).
 */
export function judgePageReader(world: StreamWorld, reader: PageReader): Violation[] {
  const out: Violation[] = [];
  const reported = new Set<string>();
  const name = `${reader.plan.name} (a page following ${reader.follows.name})`;
  const once = (invariant: string, message: string): void => {
    if (reported.has(invariant)) return;
    reported.add(invariant);
    out.push({ invariant, message: `${name}: ${message}` });
  };
  const page = new PageModel();
  const owedText = new Set<string>();
  const own = world.ledger.batches.filter((b) => streamOf(b.ref) === streamOf(reader.follows));
  let lastCursor = Number.NEGATIVE_INFINITY;
  for (const [i, session] of reader.sessions.entries()) {
    const error = session.chunks.find((c) => c.type === 'error');
    const errorText = error?.type === 'error' ? error.errorText : undefined;
    if (errorText?.includes('busy loop') === true)
      once('reader-never-spins', `from cursor ${showCursor(session.from)}: ${errorText}`);
    judgeRelease(world, session, once);
    if (session.forged) {
      const text = session.chunks.some((c) => c.type === 'text-delta' || c.type === 'start');
      if (errorText === undefined || text) {
        once(
          'forged-cursor-refused',
          `given the cursor ${showCursor(session.from)} it sent ${session.chunks.length} chunks${errorText === undefined ? ' and no error' : ''}`,
        );
      }
      continue;
    }
    const starts = session.chunks.filter((c) => c.type === 'start').length;
    if (session.from === undefined && i === 0 && session.chunks[0]?.type !== 'start') {
      once('page-resumes-exactly', `the first visit began with ${session.chunks[0]?.type ?? 'nothing'}, not start`);
    }
    if (session.from !== undefined && starts > 0) {
      once('page-resumes-exactly', `the visit from cursor ${showCursor(session.from)} sent start again`);
    }
    for (const chunk of session.chunks) {
      if (chunk.type === 'data-chamvi-cursor') {
        const cursor = (chunk as { data: { cursor: number } }).data.cursor;
        if (cursor <= lastCursor) once('cursors-only-grow', `got cursor ${cursor} after cursor ${lastCursor}`);
        lastCursor = Math.max(lastCursor, cursor);
      }
      // A second `start` (a page that replays from the start) begins the message again.
      if (chunk.type !== 'start' || i === 0) page.apply(chunk);
    }
    const due = new Set(owed(world, reader.follows, session).map((b) => b.index));
    for (const b of own) {
      if (!due.has(b.index) || !reader.follows.taken.has(`${b.ref.execution}/s${b.ref.step}/a${b.ref.attempt}`))
        continue;
      if (own.some((c) => c.index < b.index && later(reader.follows.executions, c, b))) continue;
      for (const t of b.textTokens) owedText.add(t);
    }
  }
  const owedNow = withoutShownBefore(world, reader.follows, reader.sessions[0], owedText);
  judgeShown(world, page.tokens(), reader.follows.name, owedNow, once);
  return out;
}

function judgeRelease(
  world: StreamWorld,
  session: PageSession,
  once: (invariant: string, message: string) => void,
): void {
  const closed = world.closedAt;
  if (closed === undefined) return;
  const by = Math.max(closed, session.startedAt) + CLOSE_RELEASES_MS;
  if ((session.endedAt ?? Number.POSITIVE_INFINITY) <= by) return;
  once(
    'close-releases-readers',
    `the visit from cursor ${showCursor(session.from)} ${session.endedAt === undefined ? 'was still open at the end' : `ended at ${session.endedAt} ms`}, although the store was closed at ${closed} ms`,
  );
}
