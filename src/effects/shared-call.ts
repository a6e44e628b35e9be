import { EffectBusyError } from '../errors/errors.js';
import { monotonicNow } from './claim.js';

/**
 * Waits for an identical call already in flight in this process (same store, same key) and takes
 * its resolution, as a live claim of another attempt is waited for: at most `busyWaitMs`, then
 * {@link EffectBusyError} (retryable), and no longer than this call's own `signal` allows. A retry
 * that lands on the worker still running a hung attempt therefore fails retryably instead of
 * hanging; the running call keeps the key, so nothing is applied twice.
 */
export function awaitSharedCall(
  running: Promise<unknown>,
  key: string,
  busyWaitMs: number,
  signal: AbortSignal,
): Promise<unknown> {
  signal.throwIfAborted();
  const started = monotonicNow();
  return new Promise((resolve, reject) => {
    const settle = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      settle();
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      settle();
      reject(new EffectBusyError({ key, waitedMs: Math.round(monotonicNow() - started) }));
    }, busyWaitMs);
    signal.addEventListener('abort', onAbort, { once: true });
    running.then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: Error) => {
        settle();
        reject(error);
      },
    );
  });
}
