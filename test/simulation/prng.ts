// The simulator's only source of randomness. Every choice of a history (its scenario, every
// latency, every injected fault) is drawn from generators seeded from the history's seed, so a
// seed replays exactly, on any machine, whatever ran before it in the same process.

/**
 * A small, fast, seeded pseudo-random generator (sfc32, seeded through splitmix32). Not for
 * cryptography; for reproducible histories.
 */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `seed` is any integer; `stream` separates independent sequences drawn from one seed. */
  constructor(seed: number, stream = 0) {
    let s = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(stream + 1, 0x85ebca6b)) >>> 0;
    const next = (): number => {
      // splitmix32: spreads a small seed over the whole state.
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.float();
  }

  /** Uniform in [0, 1). */
  float(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  /** Uniform integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  /** One element of a non-empty list, uniformly. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.float() * items.length)];
    if (item === undefined) throw new RangeError('Prng.pick: empty list');
    return item;
  }

  /** One of the weighted choices (`[weight, value]`), with probability proportional to its weight. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((sum, [w]) => sum + w, 0);
    let r = this.float() * total;
    for (const [w, value] of choices) {
      r -= w;
      if (r < 0) return value;
    }
    const last = choices[choices.length - 1];
    if (last === undefined) throw new RangeError('Prng.weighted: no choices');
    return last[1];
  }
}
