/**
 * A promise that resolves when `subscribe`'s wake function is called, after `timeoutMs` (when
 * given), or when `signal` aborts, whichever comes first; the subscription and timer are released
 * either way. Never rejects: a reader that was woken reads again and decides.
 */
export function abortableWait(
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
  subscribe: (wake: () => void) => () => void,
): Promise<void> {
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let unsubscribe: () => void = () => undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = (): void => {
      unsubscribe();
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    unsubscribe = subscribe(done);
    if (timeoutMs !== undefined) timer = setTimeout(done, timeoutMs);
    signal?.addEventListener('abort', done, { once: true });
  });
}
