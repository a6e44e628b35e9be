import type { ToolSet } from 'ai';
import type { AgentEntry } from '../activities/agent-registry.js';
import { defineAgent, type Agent } from '../src/agent/define-agent.js';
import type { ToolContext } from '../src/context/tool-context.js';
import type { IEffectStore } from '../src/stores/effect-store.js';
import { withFaultyEffectCalls, type FaultyToolOptions } from './faulty-tools.js';
import { withFaultyStore } from './faulty-store.js';

/**
 * Named points of an effect call, in protocol order, where a fault can strike:
 * - `before-store-read`: before the store is first asked about the key (the claim, on stores with
 *   claims; `get` on a store without);
 * - `in-already-applied`: when `alreadyApplied` is asked, before it runs (also for a tool without one);
 * - `before-effect`: when `execute` starts, after the protocol's last ownership check;
 * - `after-effect`: once `execute` is done, before its result reaches the protocol (the crash window);
 * - `before-record`: before the record write (`complete`, or `put`) is sent to the store;
 * - `during-record`: the record write reached the store, and its answer is lost on the way back.
 *
 * A `throw` at a store point is a failing store call: at `before-store-read` the call fails with a
 * retryable `EffectStoreError` (the {@link InjectedFault} as its cause) and nothing is applied; at
 * the two record points it is a failed record write, which the protocol survives (the call
 * succeeds; `chamvi.recordEffect` records later). A `kill` anywhere crashes at that point.
 * @public
 */
export type FaultPoint =
  'before-store-read' | 'in-already-applied' | 'before-effect' | 'after-effect' | 'before-record' | 'during-record';

/** Every {@link FaultPoint}, in protocol order. @public */
export const FAULT_POINTS: readonly FaultPoint[] = [
  'before-store-read',
  'in-already-applied',
  'before-effect',
  'after-effect',
  'before-record',
  'during-record',
];

/**
 * How a fault strikes:
 * - `throw`: an {@link InjectedFault} is thrown (the attempt fails; Temporal retries the activity);
 * - `kill`: the worker process is killed with SIGKILL on the spot (nothing after it runs: no
 *   `finally`, no claim release, no record);
 * - `{ stallMs }`: the attempt hangs that long (a zombie that outlives its timeout), then goes on
 *   (`then: 'continue'`, the default) or throws (`then: 'throw'`, a late error);
 * - a function: called with the hit, and what it does is the fault (throw to crash there, await
 *   something to stall until it happens).
 * @public
 */
export type FaultMode =
  | 'throw'
  | 'kill'
  | { readonly stallMs: number; readonly then?: 'continue' | 'throw' }
  | ((hit: FaultHit) => void | Promise<void>);

/** Where a fault struck, as the injector saw it. @public */
export interface FaultHit {
  /** A protocol point, or a name a tool passed to {@link FaultInjector.at} (e.g. `mid-stream`). */
  readonly point: FaultPoint | (string & {});
  /** The effect key of the call. */
  readonly key: string;
  /** Name of the tool called, when known. */
  readonly toolName?: string;
  /**
   * The attempt (1 = first): Temporal's activity attempt inside an activity; outside one, the
   * `attempt` the tools were wrapped with (or, at the claim, the attempt the claim names).
   */
  readonly attempt?: number;
  /** The run's context, as the wrapped tool got it (at a store point: the last call of this key). */
  readonly ctx?: ToolContext;
  /** The tool call's input (likewise). */
  readonly toolInput?: unknown;
}

/** One planned fault. Every filter given must match for the fault to strike. @public */
export interface FaultRule {
  /** Where it strikes: a protocol point (`FAULT_POINTS`) or a name a tool passes to {@link FaultInjector.at}. */
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
  /** Any other condition (the run's `ctx.state`, the tool input, ...). */
  readonly when?: (hit: FaultHit) => boolean;
}

/** The error a `throw` fault raises. @public */
export class InjectedFault extends Error {
  constructor(
    /** The point where it struck. */
    readonly point: string,
    /** The effect key of the call it struck. */
    readonly key: string,
  ) {
    super(`injected fault at ${point} (effect "${key}")`);
    this.name = 'InjectedFault';
  }
}

/** What the injector's wrappers know of an effect call, by key (the store sees keys only). */
export interface SeenCall {
  readonly toolName: string;
  readonly ctx: ToolContext;
  readonly toolInput: unknown;
  /** The attempt the tool wrapper reported for it, if it knew one. */
  readonly attempt?: number;
}

// Keys seen by the wrapped tools; a soak sees thousands, so the oldest are forgotten.
const MAX_SEEN_KEYS = 50_000;

/**
 * Crashes effect calls at named points of the protocol, for crash tests of effect tools, by
 * wrapping what the protocol calls, never by a branch in it: the tools (their `effectKey`,
 * `alreadyApplied` and `execute`) and the effect store (its claim, read and record write).
 *
 * ```ts
 * const faults = new FaultInjector({ point: 'after-effect', attempt: 1 }); // crash once, after the effect
 * await runAgentUnderTest({ agents, store, prompt, faults });              // wraps both for you
 * await createAgentWorker({ ..., agents: faults.wrapAgents(agents), store: faults.wrapStore(store) });
 * await runAgent(faults.wrapAgent(agent), { prompt, store: faults.wrapStore(store) }); // outside Temporal
 * ```
 *
 * The points are listed in {@link FaultPoint}; tools may add their own with {@link at}. Store
 * points strike only for the keys of calls the wrapped tools made, and not in the
 * `chamvi.recordEffect` activity (its write is the retry of a failed record, not the protocol's).
 * `fired` lists every fault that struck, in order.
 * @public
 */
export class FaultInjector {
  /** Every fault that struck, in order. */
  readonly fired: FaultHit[] = [];
  private readonly rules: Array<{ rule: FaultRule; left: number }> = [];
  private readonly seen = new Map<string, SeenCall>();

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

  /**
   * The tool set with its effect tools wrapped (other tools come back as they are): the points
   * `in-already-applied`, `before-effect` and `after-effect` strike in their hooks, and each call's
   * key is remembered for the store points. Wrapped tools are still effect tools.
   * `attempt` is the attempt outside Temporal (inside an activity, Temporal's attempt counts).
   */
  wrapTools<TOOLS extends ToolSet>(tools: TOOLS, options: FaultyToolOptions = {}): TOOLS {
    const wrapped: Record<string, unknown> = {};
    for (const [name, tool] of Object.entries(tools)) wrapped[name] = this.wrapTool(name, tool, options);
    return wrapped as TOOLS;
  }

  /** One tool, wrapped as by {@link wrapTools} (a tool that is not an effect tool comes back as it is). */
  wrapTool<TOOL>(toolName: string, tool: TOOL, options: FaultyToolOptions = {}): TOOL {
    return withFaultyEffectCalls(toolName, tool, options, {
      strike: (hit) => this.strike(hit),
      remember: (key, call) => this.remember(key, call),
    });
  }

  /** The agents (or registrations) with their tools wrapped, for a worker's `agents` option. */
  wrapAgents(entries: readonly AgentEntry[]): AgentEntry[] {
    return entries.map((entry) => {
      if ('agent' in entry && typeof entry.agent === 'object') return { ...entry, agent: this.wrapAgent(entry.agent) };
      return this.wrapAgent(entry as Agent);
    });
  }

  /** One agent with its tools wrapped. */
  wrapAgent(agent: Agent): Agent {
    return defineAgent({
      // Its AI SDK settings (stopWhen, prepareStep, output, ...) and telemetry stay the agent's.
      ...agent.settings,
      name: agent.name,
      model: agent.model,
      ...(agent.instructions !== undefined ? { instructions: agent.instructions } : {}),
      tools: this.wrapTools(agent.tools),
      maxSteps: agent.maxSteps,
      ...(agent.telemetry !== undefined ? { telemetry: agent.telemetry } : {}),
    });
  }

  /**
   * The store, wrapped: `before-store-read` strikes before its claim (or its `get`, on a store
   * without claims), `before-record` and `during-record` around its `complete` or `put`. Every
   * other method (close, prune, list) is the store's own; a store without claims stays without.
   */
  wrapStore<STORE extends IEffectStore>(store: STORE): STORE {
    return withFaultyStore(store, {
      strike: (hit) => this.strike(hit),
      seen: (key) => this.seen.get(key),
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

  private remember(key: string, call: SeenCall): void {
    this.seen.delete(key);
    this.seen.set(key, call);
    if (this.seen.size > MAX_SEEN_KEYS) this.seen.delete(this.seen.keys().next().value as string);
  }

  private async strike(hit: FaultHit): Promise<void> {
    const planned = this.rules.find(({ rule, left }) => left > 0 && matches(rule, hit));
    if (planned === undefined) return;
    if (planned.rule.probability !== undefined && Math.random() >= planned.rule.probability) return;
    planned.left -= 1;
    this.fired.push(hit);
    const mode = planned.rule.mode ?? 'throw';
    if (typeof mode === 'function') return mode(hit);
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
