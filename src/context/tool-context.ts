import { InvalidToolContextError, LegacyContextFieldError } from '../errors/errors.js';

/** JSON-like data a run carries (its trigger, state and artifacts). @public */
export type RunData = Readonly<Record<string, unknown>>;

/** The logical run an effect belongs to. @public */
export interface RunInfo {
  /**
   * Stable id of the logical run. Effect keys start with it, so it must not change across
   * retries of the same run (under Temporal: activity retries, workflow retries, continue-as-new
   * and reset all keep it; a brand-new start of a workflow id gets a new one).
   */
  readonly runId: string;
  /** What started the run (an issue event, a schedule, ...), as given when the run was started. */
  readonly trigger: unknown;
  /** Name of the agent running. */
  readonly agent: string;
  /** Aborts when the run or the current attempt is cancelled or timed out. */
  readonly signal: AbortSignal;
}

/**
 * The effect call a context is handed to, as `ctx.effect`: what the engine tells an effect tool's
 * `alreadyApplied` and `execute` about the call they serve. Enumerable, so it shows in logs and a
 * spread of the context (or of the call options holding it) keeps it.
 * @public
 */
export interface EffectCallInfo {
  /**
   * The call's effect key: what `effectKey` returned, or the default key. Embed it in what
   * `execute` creates (`effectMarker(key)`, an `Idempotency-Key`, a message id), so the key and
   * the marker never disagree.
   */
  readonly key: string;
  /**
   * The fence number of the claim under which the call runs, on stores with claims (absent on a
   * plain `IEffectStore`): it grows every time another attempt takes the key over, so a remote that
   * remembers the highest fence it has seen per key can refuse a write from an older attempt (see
   * `effectFenceOf`).
   */
  readonly fence?: number;
  /** The model step the call belongs to: the number of assistant messages before it (see `stepIndex`). */
  readonly step: number;
  /**
   * Set on a compensation (`compensate`, `alreadyCompensated`): the key of the effect it undoes;
   * `key` is then the compensation's own key, `<compensates>:compensate`.
   * @beta
   */
  readonly compensates?: string;
}

/**
 * What effect tools see of the run: `effectKey(input, ctx, options)` gets the run's context, and
 * `alreadyApplied(key, input, ctx)` and `execute` (as `options.context`) get one object for the
 * call: the run's context with {@link EffectCallInfo} as `ctx.effect` (the same `run`, `state` and
 * `artifacts`).
 *
 * Reading a field of the former `RunContext` (`ctx.runId`, `ctx.agent`, `ctx.trigger`,
 * `ctx.signal`) throws a {@link LegacyContextFieldError} rather than reading `undefined`; those guards are
 * not own fields, so the context still serialises as JSON. Every context the library hands to the
 * hooks is guarded: one made by {@link createToolContext} carries the guards itself, a plain object
 * given to `wrapToolsForRun` reaches `effectKey` through a guarded view of it (see
 * {@link guardToolContext}), and the context of one call carries them like one made by
 * `createToolContext`. (A type alias rather than an interface so that it satisfies the AI
 * SDK's `Context` record type.)
 * @public
 */
export type ToolContext<State extends RunData = RunData> = {
  readonly run: RunInfo;
  /** The run's state, as given when the run was started (default `{}`). */
  readonly state: State;
  /** Named artifacts handed to the run (documents, file contents, ids), as given when it started (default `{}`). */
  readonly artifacts: RunData;
  /**
   * The effect call this context is handed to: set on the context an effect tool's
   * `alreadyApplied` and `execute` get; absent in `effectKey` (which computes the key) and for
   * plain tools. A field of that name on a context of your own is replaced there.
   */
  readonly effect?: EffectCallInfo;
};

/** What {@link createToolContext} needs; everything but `runId` and `agent` is optional. */
export interface ToolContextInit<State extends RunData = RunData> {
  runId: string;
  agent: string;
  trigger?: unknown;
  signal?: AbortSignal;
  state?: State;
  artifacts?: RunData;
}

const LEGACY_FIELDS = ['runId', 'agent', 'trigger', 'signal'] as const;
const LEGACY_FIELD_SET: ReadonlySet<string | symbol> = new Set(LEGACY_FIELDS);

/**
 * The prototype of the contexts this module builds: a throwing getter for each field of the former `RunContext`, so
 * reading one fails loudly, while JSON, spreads and `Object.keys` see the own fields only. An own
 * field of that name (a user's `signal`) shadows it.
 */
const LEGACY_GUARDS: object = Object.freeze(
  Object.defineProperties(
    {},
    Object.fromEntries(
      LEGACY_FIELDS.map((field) => [
        field,
        {
          get(): never {
            throw new LegacyContextFieldError(field);
          },
        },
      ]),
    ),
  ),
);

/** Contexts known to throw on a legacy field read: made by createToolContext or effectCallContext, or views made by guardToolContext. */
const guarded = new WeakSet<object>();

/** Builds a {@link ToolContext} with the legacy-field guards in place. */
export function createToolContext<State extends RunData = RunData>(init: ToolContextInit<State>): ToolContext<State> {
  if (typeof init.runId !== 'string' || init.runId.length === 0) {
    throw new TypeError(
      'createToolContext: runId must be a non-empty string; it prefixes every effect key of the run.',
    );
  }
  const run: RunInfo = Object.freeze({
    runId: init.runId,
    trigger: init.trigger,
    agent: init.agent,
    signal: init.signal ?? new AbortController().signal,
  });
  const ctx = { __proto__: LEGACY_GUARDS, run, state: init.state ?? ({} as State), artifacts: init.artifacts ?? {} };
  const frozen = Object.freeze(ctx) as ToolContext<State>;
  guarded.add(frozen);
  return frozen;
}

/**
 * The context of one effect call: a plain object with `ctx`'s own enumerable fields (as they are
 * now: a copy, not a view) and `effect` (frozen), guarded against legacy-field reads like `ctx`,
 * frozen when `ctx` is. A copy so that spreads, JSON and logs show `effect`: a field set on it does
 * not reach `ctx` (its `state` and `artifacts` are `ctx`'s own objects, so writes into them do),
 * and `ctx`'s prototype and non-enumerable fields are not copied.
 */
export function effectCallContext<C extends ToolContext>(ctx: C, effect: EffectCallInfo): C {
  const call = { __proto__: LEGACY_GUARDS, ...ctx, effect: Object.freeze(effect) } as unknown as C;
  guarded.add(call);
  callBases.set(call, ctx);
  return Object.isFrozen(ctx) ? Object.freeze(call) : call;
}

/** The run context each call context was made from: a run nested in a call runs in that one, without the call's `effect`. */
const callBases = new WeakMap<object, ToolContext>();

/**
 * The context the hooks of a run get: `ctx` itself when it already carries the legacy-field guards
 * (made by {@link createToolContext}), else a guarded view of it. The view reads through to `ctx` (its
 * fields, spreads and `JSON.stringify` are those of `ctx`, later changes show), except that reading
 * `runId`, `agent`, `trigger` or `signal` where `ctx` has no such property throws
 * {@link LegacyContextFieldError} instead of giving `undefined`, which would collapse a custom key
 * such as `` `${ctx.runId}:comment` `` across runs. `ctx` itself is neither changed nor frozen.
 * The view is a different object from `ctx` (compare `ctx.run`, not the context, for identity).
 *
 * @param where who asks, for the error message (`wrapToolsForRun`).
 * @throws InvalidToolContextError when `ctx.run.runId` is not a non-empty string (a legacy
 *   `RunContext`, a context missing `run`): every effect key of the run starts with it.
 */
export function guardToolContext<C extends ToolContext>(ctx: C, where: string): C {
  const base = typeof ctx === 'object' && ctx !== null ? callBases.get(ctx) : undefined;
  // Its `effect` names the outer call: a nested run's calls must count their own steps and keys.
  if (base !== undefined) return guardToolContext(base as C, where);
  if (typeof ctx === 'object' && ctx !== null && Object.hasOwn(ctx, 'effect')) {
    // A copy of a call context (validated by a contextSchema, spread by user code): the same, by value.
    const { effect: _outerCall, ...run } = ctx;
    return guardToolContext(run as C, where);
  }
  if (typeof ctx === 'object' && ctx !== null && guarded.has(ctx)) return ctx;
  const runId = (ctx as { run?: { runId?: unknown } } | null | undefined)?.run?.runId;
  if (typeof runId !== 'string' || runId.length === 0) throw new InvalidToolContextError({ where, ctx });
  const view = new Proxy(ctx, {
    get(target, property, receiver) {
      if (LEGACY_FIELD_SET.has(property) && !(property in target)) {
        throw new LegacyContextFieldError(property as string);
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  guarded.add(view);
  return view;
}
