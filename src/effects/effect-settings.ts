import { MAX_TIMEOUT_MS, wholeOption } from '../stores/store-options.js';

/** Default lease on a claimed key while its effect runs, in ms. */
export const DEFAULT_LEASE_MS = 60_000;

/** Default wait for another attempt's live claim (or an identical call in flight) before `EffectBusyError`, in ms. */
export const DEFAULT_BUSY_WAIT_MS = 10_000;

/**
 * Default time a claim stays held after the attempt's signal aborted (cancellation, a timeout)
 * while its `execute` is still running in this process, in ms: 2 minutes. Past it the claim is
 * released with a warning, so a hung `execute` cannot block its key forever.
 */
export const DEFAULT_ABORT_GRACE_MS = 120_000;

/**
 * Accepted `abortGraceMs`: a whole number of ms from 0 (the claim is released at the first tick
 * of its keep-alive after the abort) to 2^31 - 1 (about 24.8 days, the longest delay Node's timers
 * accept).
 */
export const ABORT_GRACE_RANGE = { min: 0, max: MAX_TIMEOUT_MS } as const;

/**
 * An `abortGraceMs` option as `owner` was given it: the value, or {@link DEFAULT_ABORT_GRACE_MS}
 * when absent. `NaN` would switch the bound off (no time is ever `>= NaN` past the abort), so it is
 * refused with the rest of what is outside {@link ABORT_GRACE_RANGE}.
 *
 * @throws InvalidOptionError naming the option, the value and the range.
 */
export function abortGraceOption(owner: string, value: unknown): number {
  return wholeOption(owner, 'abortGraceMs', value, DEFAULT_ABORT_GRACE_MS, ABORT_GRACE_RANGE);
}
