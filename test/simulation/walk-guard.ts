/** Thrown out of a store's chain walk that read far more entries than the store holds, without yielding. */
export class RunawayWalkError extends Error {
  constructor(reads: number, size: number) {
    super(
      `the chain walk read ${reads} entries of a store holding ${size} without yielding (a parent cycle followed forever)`,
    );
    this.name = 'RunawayWalkError';
  }
}

/**
 * The memory conversation store's entry map, guarded: `get` counts the reads made in one
 * synchronous stretch (the count restarts at the next microtask), and throws
 * {@link RunawayWalkError} past four reads per stored entry. A walk of a chain reads each entry
 * once; a walk that follows a parent cycle forever would otherwise hang the simulator (and, in a
 * worker, the whole process). The simulator's own reads use {@link peek} and {@link unguarded}.
 */
export class WalkGuardMap<K, V> extends Map<K, V> {
  private reads = 0;
  private armed = false;

  override get(key: K): V | undefined {
    if (!this.armed) {
      this.armed = true;
      queueMicrotask(() => {
        this.reads = 0;
        this.armed = false;
      });
    }
    if (++this.reads > 4 * this.size + 100) {
      const reads = this.reads;
      this.reads = 0;
      throw new RunawayWalkError(reads, this.size);
    }
    return super.get(key);
  }

  /** `get` without counting. */
  peek(key: K): V | undefined {
    return super.get(key);
  }

  /** A copy of the entries, read without counting. */
  unguarded(): Map<K, V> {
    return new Map(super.entries());
  }
}
