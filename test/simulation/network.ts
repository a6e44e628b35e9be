import type { Prng } from './prng.js';
import { TeardownSignal, type SimProcess } from './sim-process.js';
import type { Trace } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

/**
 * What goes wrong with one request, decided when it is sent:
 * - `lose-request`: it never arrives; the caller gets a connection error after a while;
 * - `lose-response`: it arrives and is applied, the answer is lost: the caller gets an error
 *   although the operation happened (outcome unknown);
 * - `stall`: it is applied, the answer comes very late (a black-holed connection that recovers);
 * - `stall-forever`: it is applied, the answer never comes.
 */
export type NetworkFault = 'none' | 'lose-request' | 'lose-response' | 'stall' | 'stall-forever';

/** Latencies and fault odds of the links of one history. */
export interface NetworkProfile {
  /** One-way latency, uniform in [min, max] ms, except for spikes. */
  readonly latencyMs: readonly [number, number];
  /** Odds that one direction of a request takes a spike instead, uniform in [max, spikeMaxMs]. */
  readonly spikeChance: number;
  readonly spikeMaxMs: number;
  /** How long a caller waits before it sees a lost request as an error, uniform in this range (ms). */
  readonly errorAfterMs: readonly [number, number];
  /** Extra delay of a stalled answer, uniform in this range (ms). */
  readonly stallMs: readonly [number, number];
}

/** The error a caller sees for a lost request or answer. */
export class SimConnectionError extends Error {
  constructor(what: string) {
    super(`connection reset (simulated: ${what})`);
    this.name = 'SimConnectionError';
  }
}

/** What the network layer tells its user about one request, for the invariants. */
export interface Delivery<T> {
  /** Virtual time the request reached the server, if it did. */
  arrivedAt?: number;
  result?: T;
  /** How the caller learned of it: the answer, an error, or nothing (yet). */
  answered?: 'ok' | 'error';
}

/**
 * Carries requests from a simulated process to a server (the store, a remote) and answers back,
 * with seeded latencies and faults, honouring the process's death and pauses (see
 * {@link SimProcess}). The server applies a request at the moment it arrives, so the order of
 * arrivals is the order the server sees.
 */
export class Network {
  private tornDown = false;

  constructor(
    private readonly clock: VirtualClock,
    private readonly rng: Prng,
    private readonly trace: Trace,
    private readonly profile: NetworkProfile,
  ) {}

  /** One latency draw, in ms. */
  latency(): number {
    const p = this.profile;
    return this.rng.chance(p.spikeChance)
      ? this.rng.int(p.latencyMs[1], p.spikeMaxMs)
      : this.rng.int(p.latencyMs[0], p.latencyMs[1]);
  }

  /**
   * Sends one request from `from` and resolves with the server's answer.
   * @param who shown in the trace (`P1/A2`).
   * @param label the operation, shown in the trace.
   * @param apply runs at arrival, on the server; its result is the answer.
   * @param fault what goes wrong with this request.
   * @param delivery filled in as the request travels (arrival, answer).
   * @param describe the answer as the trace shows it.
   */
  async call<T>(
    from: SimProcess,
    who: string,
    label: string,
    apply: () => T | Promise<T>,
    fault: NetworkFault,
    delivery: Delivery<T> = {},
    describe: (result: T) => string = () => 'ok',
  ): Promise<T> {
    if (this.tornDown) throw new TeardownSignal();
    if (!from.beginOperation(label)) return from.park();
    await from.whenRunning();
    await this.clock.sleep(this.latency());
    this.checkTeardown();
    // A dead process's messages never arrive.
    if (from.isDead) return from.park();
    if (fault === 'lose-request') {
      this.trace.log(who, `${label} → request lost`);
      await this.clock.sleep(this.rng.int(...this.profile.errorAfterMs));
      await from.whenRunning();
      this.checkTeardown();
      delivery.answered = 'error';
      throw new SimConnectionError('request lost');
    }
    // A server that refuses answers with an error, which travels back like any answer.
    let answer: { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };
    try {
      answer = { ok: true, value: await apply() };
    } catch (error) {
      answer = { ok: false, error };
    }
    delivery.arrivedAt = this.clock.now();
    const shown = answer.ok ? describe(answer.value) : `refused: ${(answer.error as Error).message}`;
    this.trace.log(who, `${label} → ${shown}${fault === 'none' ? '' : ` [${fault}]`}`);
    from.afterArrival(label);
    if (fault === 'stall-forever') return from.park();
    if (fault === 'stall') await this.clock.sleep(this.rng.int(...this.profile.stallMs));
    await this.clock.sleep(this.latency());
    this.checkTeardown();
    await from.whenRunning();
    this.checkTeardown();
    if (fault === 'lose-response') {
      delivery.answered = 'error';
      throw new SimConnectionError('answer lost');
    }
    if (!answer.ok) {
      delivery.answered = 'error';
      throw answer.error;
    }
    delivery.result = answer.value;
    delivery.answered = 'ok';
    return answer.value;
  }

  /** From now on every request fails at once (the history is over). */
  teardown(): void {
    this.tornDown = true;
  }

  private checkTeardown(): void {
    if (this.tornDown) throw new TeardownSignal();
  }
}
