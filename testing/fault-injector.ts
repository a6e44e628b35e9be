import type { FaultPoint } from '../src/effects/effect-protocol.js';
import type { EffectCallHooks } from '../activities/effect-call.js';
import type { ToolCallInput } from '../common/index.js';

/**
 * How a fault strikes:
 * - `throw`: an {@link InjectedFault} is thrown (the attempt fails; Temporal retries the activity);
 * - `kill`: the worker process is killed with SIGKILL on the spot (nothing after it runs: no
 *   `finally`, no claim release, no record);
 * - `{ stallMs }`: the attempt hangs that long (a zombie that outlives its timeout), then goes on
 *   (`then: 'continue'`, the default) or throws (`then: 'throw'`, a late error).
 */
export type FaultMode = 'throw' | 'kill' | { readonly stallMs: number; readonly then?: 'continue' | 'throw' };

/** Where a fault struck, as the injector saw it. */
export interface FaultHit {
  /** A protocol point, or a name a tool passed to {@link FaultInjector.at} (e.g. `mid-stream`). */
  readonly point: FaultPoint | (string & {});
  readonly key: string;
  readonly toolName?: string;
  /** Temporal's activity attempt (1 = first), when known. */
  readonly attempt?: number;
  /** The activity input (agent, run, tool call), under Temporal. */
  readonly input?: ToolCallInput;
}

/** One planned fault. Every filter given must match for the fault to strike. */
export interface FaultRule {
  readonly point: FaultPoint | (string & {});
  /** Default `throw`. */
  readonly mode?: FaultMode;
  /** How many times it strikes; default 1. `Infinity` for every match. */
  readonly times?: number;
  /** Only calls of this tool. */
  readonly tool?: string;
  /** Only this key: exact string, pattern, or predicate. */
  readonly key?: string | RegExp | ((key: string) => boolean);
  /** Only this attempt (1 = first); the usual way to crash once and let the retry through. */
  readonly attempt?: number;
  /** Strike with this probability (0..1) on each match; default 1. */
  readonly probability?: number;
  /** Any other condition (the run's `state`, the tool input, ...). */
  readonly when?: (hit: FaultHit) => boolean;
}

/** The error a `throw` fault raises. */
export class InjectedFault extends Error {
  constructor(
    readonly point: string,
    readonly key: string,
  ) {
    super(`injected fault at ${point} (effect "${key}")`);
    this.name = 'InjectedFault';
  }
}

/**
 * Crashes effect calls at named points of the protocol, for crash tests of effect tools:
 *
 * ```ts
 * const faults = new FaultInjector({ point: 'after-effect', attempt: 1 }); // crash once, after the effect
 * await createAgentWorker({ ..., hooks: faults.hooks });                   // under Temporal
 * wrapToolsForRun(tools, ctx, store, undefined, { fault: faults.forTool('comment') }); // outside it
 * ```
 *
 * The points, in protocol order: `before-store-read`, `in-already-applied`, `before-effect`,
 * `after-effect` (the effect happened, `execute` has not returned: the crash window),
 * `before-record`, `during-record` (the record write fails; the call still succeeds and the
 * effect-store activity records later). Tools may add their own points with {@link at}.
 * `fired` lists every fault that struck, in order.
 */
export class FaultInjector {
  readonly fired: FaultHit[] = [];
  private readonly rules: Array<{ rule: FaultRule; left: number }> = [];

  constructor(rules: FaultRule | readonly FaultRule[] = []) {
    const list: readonly FaultRule[] = Array.isArray(rules) ? (rules as readonly FaultRule[]) : [rules as FaultRule];
    for (const rule of list) this.add(rule);
  }

  /** Plans one more fault. */
  add(rule: FaultRule): this {
    this.rules.push({ rule, left: rule.times ?? 1 });
    return this;
  }

  /** Faults that struck at `point` (all points when omitted). */
  count(point?: string): number {
    return point === undefined ? this.fired.length : this.fired.filter((h) => h.point === point).length;
  }

  /** For `createAgentWorker`, `chamviPlugin` or `createChamviActivities`: `{ hooks: faults.hooks }`. */
  get hooks(): EffectCallHooks {
    return {
      fault: (point, key, call) =>
        this.strike({ point, key, toolName: call.input.toolName, attempt: call.attempt, input: call.input }),
    };
  }

  /** For `applyEffect`'s env or `wrapToolsForRun`'s options: `{ fault: faults.forTool('comment', attempt) }`. */
  forTool(toolName?: string, attempt?: number): (point: FaultPoint, key: string) => Promise<void> {
    return (point, key) =>
      this.strike({
        point,
        key,
        ...(toolName !== undefined ? { toolName } : {}),
        ...(attempt !== undefined ? { attempt } : {}),
      });
  }

  /** A point of the tool's own (e.g. `mid-stream`), called from inside `execute`. */
  at(point: string, key = '', info: Omit<FaultHit, 'point' | 'key'> = {}): Promise<void> {
    return this.strike({ ...info, point, key });
  }

  /**
   * An injector from an environment variable holding JSON rules (no functions; `key` as a
   * string is a regular expression), for worker processes: `CHAMVI_FAULTS='[{"point":"after-effect","mode":"kill","attempt":1}]'`.
   */
  static fromEnv(value: string | undefined = process.env['CHAMVI_FAULTS']): FaultInjector {
    if (value === undefined || value.trim() === '') return new FaultInjector();
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new TypeError(`CHAMVI_FAULTS is not JSON (${(error as Error).message}); give an array of fault rules.`, {
        cause: error,
      });
    }
    const rules = (Array.isArray(parsed) ? parsed : [parsed]) as Array<FaultRule & { key?: string }>;
    return new FaultInjector(rules.map((r) => (typeof r.key === 'string' ? { ...r, key: new RegExp(r.key) } : r)));
  }

  private async strike(hit: FaultHit): Promise<void> {
    const planned = this.rules.find(({ rule, left }) => left > 0 && matches(rule, hit));
    if (planned === undefined) return;
    if (planned.rule.probability !== undefined && Math.random() >= planned.rule.probability) return;
    planned.left -= 1;
    this.fired.push(hit);
    const mode = planned.rule.mode ?? 'throw';
    if (mode === 'throw') throw new InjectedFault(hit.point, hit.key);
    if (mode === 'kill') {
      process.kill(process.pid, 'SIGKILL');
      await new Promise<never>(() => undefined); // never resumes: the process is gone
    }
    if (typeof mode === 'object') {
      await new Promise((resolve) => setTimeout(resolve, mode.stallMs));
      if (mode.then === 'throw') throw new InjectedFault(`${hit.point} (late)`, hit.key);
    }
  }
}

function matches(rule: FaultRule, hit: FaultHit): boolean {
  if (rule.point !== hit.point) return false;
  if (rule.tool !== undefined && rule.tool !== hit.toolName) return false;
  if (rule.attempt !== undefined && rule.attempt !== hit.attempt) return false;
  if (rule.key !== undefined) {
    const k = rule.key;
    const ok = typeof k === 'string' ? k === hit.key : k instanceof RegExp ? k.test(hit.key) : k(hit.key);
    if (!ok) return false;
  }
  return rule.when === undefined || rule.when(hit);
}
