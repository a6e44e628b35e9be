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

/**
 * A signal that aborts when any of `signals` does, or after `timeoutMs`. Built by hand rather
 * than with `AbortSignal.any`: Node may garbage-collect a composite signal that only a listener
 * holds, and then its abort never fires (a waiting reader would sleep until its safety poll).
 * `dispose` removes the listeners from long-lived sources; `abort` aborts it (and disposes).
 */
export function linkedSignal(
  signals: ReadonlyArray<AbortSignal | undefined>,
  timeoutMs?: number,
): { signal: AbortSignal; dispose: () => void; abort: () => void } {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  const sources = signals.filter((s): s is AbortSignal => s !== undefined);
  const timer = timeoutMs === undefined ? undefined : setTimeout(abort, timeoutMs);
  const dispose = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    for (const source of sources) source.removeEventListener('abort', abort);
  };
  for (const source of sources) {
    if (source.aborted) controller.abort();
    else source.addEventListener('abort', abort, { once: true });
  }
  controller.signal.addEventListener('abort', dispose, { once: true });
  return { signal: controller.signal, dispose, abort };
}
