/** Readers waiting for a run's next batch, by run id: woken by a notification for their run, or all at once. */
export class RunWaiters {
  private readonly byRun = new Map<string, Set<() => void>>();

  /** Adds `wake` for `runId`; the returned function removes it. */
  add(runId: string, wake: () => void): () => void {
    let set = this.byRun.get(runId);
    if (set === undefined) this.byRun.set(runId, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.byRun.get(runId) === set) this.byRun.delete(runId);
    };
  }

  /** Wakes the readers of `runId`. */
  wake(runId: string): void {
    for (const wake of [...(this.byRun.get(runId) ?? [])]) wake();
  }

  /** Wakes every reader (a lost notification connection, a closed store): they read again. */
  wakeAll(): void {
    for (const set of [...this.byRun.values()]) for (const wake of [...set]) wake();
  }
}
