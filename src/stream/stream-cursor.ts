import { wholeOption } from '../stores/store-options.js';

/**
 * Accepted stream cursors: whole numbers from 0 (before the first batch) to
 * `Number.MAX_SAFE_INTEGER`. Batches are numbered from 1, so 0 means "from the start".
 */
export const STREAM_CURSOR_RANGE = { min: 0, max: Number.MAX_SAFE_INTEGER } as const;

/**
 * The `from` cursor `owner` was given (0 when absent). A cursor usually comes back from a page
 * (a query parameter, a stored value), so it is checked, not believed: `NaN` would match no batch
 * and wait forever, a negative one would replay everything as if it were a resumption.
 *
 * @throws InvalidOptionError naming the option, the value and the range.
 */
export function streamCursorOption(owner: string, from: unknown): number {
  return wholeOption(owner, 'from', from, 0, STREAM_CURSOR_RANGE, {
    unit: '',
    hint: 'the `cursor` of the last batch or `data-chamvi-cursor` part you handled, or 0 for the start',
  });
}
