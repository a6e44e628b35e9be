import { InvalidToolContextError, LegacyContextFieldError } from '../errors/errors.js';

/** JSON-like data a run carries (its trigger, state and artifacts). */
export type RunData = Readonly<Record<string, unknown>>;

/** The logical run an effect belongs to. */
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
 * What effect tools see of the run: `effectKey(input, ctx, options)`,
 * `alreadyApplied(key, input, ctx)` and `execute` (as `options.context`) get the same object.
 *
 * Reading a 0.1-era field (`ctx.runId`, `ctx.agent`, `ctx.trigger`, `ctx.signal`) throws a
 * {@link LegacyContextFieldError} rather than reading `undefined`; those guards are
 * non-enumerable, so the context still serialises as JSON. Every context the library hands to the
 * hooks is guarded: one made by {@link createToolContext} carries the guards itself, and a plain
 * object given to `wrapToolsForRun` reaches the hooks through a guarded view of it (see
 * {@link guardToolContext}). (A type alias rather than an interface so that it satisfies the AI
 * SDK's `Context` record type.)
 */
export type ToolContext<State extends RunData = RunData> = {
  readonly run: RunInfo;
  /** The run's state, as given when the run was started (default `{}`). */
  readonly state: State;
  /** Named artifacts handed to the run (documents, file contents, ids), as given when it started (default `{}`). */
  readonly artifacts: RunData;
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

/** Contexts known to throw on a 0.1 field read: made by createToolContext, or views made by guardToolContext. */
const guarded = new WeakSet<object>();

/** Builds a {@link ToolContext} with the 0.1 migration guards in place. */
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
  const ctx = { run, state: init.state ?? ({} as State), artifacts: init.artifacts ?? {} };
  for (const field of LEGACY_FIELDS) {
    Object.defineProperty(ctx, field, {
      enumerable: false,
      get() {
        throw new LegacyContextFieldError(field);
      },
    });
  }
  const frozen = Object.freeze(ctx);
  guarded.add(frozen);
  return frozen;
}

/**
 * The context the hooks of a run get: `ctx` itself when it already carries the 0.1 guards (made
 * by {@link createToolContext}), else a guarded view of it. The view reads through to `ctx` (its
 * fields, spreads and `JSON.stringify` are those of `ctx`, later changes show), except that reading
 * `runId`, `agent`, `trigger` or `signal` where `ctx` has no such property throws
 * {@link LegacyContextFieldError} instead of giving `undefined`, which would collapse a custom key
 * such as `` `${ctx.runId}:comment` `` across runs. `ctx` itself is neither changed nor frozen.
 * The view is a different object from `ctx` (compare `ctx.run`, not the context, for identity).
 *
 * @param where who asks, for the error message (`wrapToolsForRun`).
 * @throws InvalidToolContextError when `ctx.run.runId` is not a non-empty string (a 0.1
 *   `RunContext`, a context missing `run`): every effect key of the run starts with it.
 */
export function guardToolContext<C extends ToolContext>(ctx: C, where: string): C {
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
