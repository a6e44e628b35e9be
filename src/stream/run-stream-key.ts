import type { RunStreamKey } from './run-stream-store.js';

/**
 * Stream `key` as one string, for maps and wake-up lists: its three ids in order, JSON-quoted, so
 * two different keys never give the same string (whatever characters the ids hold).
 *
 * @throws TypeError when an id is not a string (a key typed by hand, or read from elsewhere).
 */
export function streamIdOf(key: RunStreamKey): string {
  return JSON.stringify(streamKeyOf(key));
}

/**
 * The three ids of `key`, checked: a reader or writer keyed by something else than strings would
 * read or write a stream no one else can find.
 *
 * @throws TypeError naming the field that is not a string.
 */
export function streamKeyOf(key: RunStreamKey): [runId: string, workflowId: string, firstExecutionRunId: string] {
  const ids = [key.runId, key.workflowId, key.firstExecutionRunId] as const;
  const names = ['runId', 'workflowId', 'firstExecutionRunId'] as const;
  ids.forEach((id, i) => {
    if (typeof id !== 'string') {
      throw new TypeError(
        `A run stream key needs ${names[i]} as a string (got ${id === null ? 'null' : typeof id}): pass the run id, the workflow id and the first execution run id.`,
      );
    }
  });
  return [...ids];
}
