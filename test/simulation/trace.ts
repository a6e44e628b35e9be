/** One thing that happened in a history, at a virtual time. */
export interface TraceEvent {
  /** Virtual ms since the history began (the monotonic clock). */
  readonly at: number;
  /** Who: a process (`P1`), an attempt in it (`P1/A2`), a remote, or `world` (scenario events). */
  readonly who: string;
  readonly what: string;
}

/**
 * The readable record of one history: who did what, in virtual ms. Printed with a violation, so
 * that a failing seed can be understood before it is replayed.
 */
export class Trace {
  private readonly events: TraceEvent[] = [];

  constructor(private readonly now: () => number) {}

  log(who: string, what: string): void {
    this.events.push({ at: this.now(), who, what });
  }

  all(): readonly TraceEvent[] {
    return this.events;
  }

  /** The trace as aligned lines, e.g. `   1502 ms  P1/A1   claim → acquired (fence 1, lease until 2502 ms)`. */
  render(indent = '    '): string {
    const width = Math.max(4, ...this.events.map((e) => e.who.length));
    return this.events
      .map((e) => `${indent}${String(Math.round(e.at)).padStart(7)} ms  ${e.who.padEnd(width)}  ${e.what}`)
      .join('\n');
  }
}
