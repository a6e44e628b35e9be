import type { ToolExecutionOptions } from 'ai';
import { effectCallContext, type ToolContext } from '../context/tool-context.js';
import { EffectClaimLostError, EffectResultNotSerializableError } from '../errors/errors.js';
import type {
  EffectClaims,
  EffectOrigin,
  EffectRecord,
  EffectRecordInput,
  IEffectStore,
} from '../stores/effect-store.js';
import { hasClaims } from '../stores/effect-store.js';
import { Claim, nextOwner } from './claim.js';
import type { EffectTool } from './define-effect-tool.js';
import { inputFingerprint, resolveCallKey, type CallKey } from './effect-key.js';
import type { EffectEvent } from './effect-event.js';
import { consoleEffectLogger, type EffectCallReport, type EffectLogger, type EffectOutcome } from './effect-report.js';
import { recordedResult, runExecute, unserializableReason } from './effect-result.js';
import { abortGraceOption, DEFAULT_BUSY_WAIT_MS, DEFAULT_LEASE_MS } from './effect-settings.js';
import { inFlightCalls } from './in-flight.js';
import { awaitSharedCall } from './shared-call.js';
import { stepIndex } from './step-index.js';
import { describeError, storeFailure } from './store-failure.js';

/** Where and how one effect call runs. Only `store` is required. */
export interface EffectEnv {
  readonly store: IEffectStore;
  /** Default: `console.warn`. */
  readonly logger?: EffectLogger;
  /** The attempt this call is (Temporal's activity attempt). Default 1. */
  readonly attempt?: number;
  /** Claim owner token of this attempt. Default: unique per call (a random per-process prefix and a counter). */
  readonly owner?: string;
  /**
   * Lease on the key while the effect runs, in ms (claim stores only). Renewed once a third of it has
   * passed, before half of it is gone. Default 60 000.
   */
  readonly leaseMs?: number;
  /**
   * How long to wait for another attempt's live claim, or for an identical call in flight in this
   * process, before failing with `EffectBusyError` (retryable), in ms. Default 10 000.
   */
  readonly busyWaitMs?: number;
  /**
   * How long the claim stays held after the call's signal aborted while `execute` is still running,
   * in ms. Default 120 000 (`DEFAULT_ABORT_GRACE_MS`). Until then a retry elsewhere waits and
   * finds the record; past it the claim is released with a warning and a retry may apply again.
   * A whole number from 0 to 2^31 - 1, else the call fails with `InvalidOptionError` before
   * anything is read or written.
   */
  readonly abortGraceMs?: number;
  /** Called when the result could not be recorded after the effect (the call still succeeds). */
  readonly onRecordFailed?: (key: string, record: EffectRecordInput, error: unknown) => void;
  /**
   * Called once per call that has to wait for its key: another attempt holds a live claim on it, or
   * an identical call is in flight in this process (for metrics; the wait itself is `busyWaitMs`).
   */
  readonly onBusyWait?: (key: string) => void;
  /**
   * Told each step of the protocol as it happens (claim, `alreadyApplied`, execute, record; see
   * {@link EffectEvent}). What it throws is logged and ignored: an observer cannot change the
   * outcome of a call (a throw after `execute` must not lose the record of an applied effect).
   */
  readonly observe?: (event: EffectEvent) => void;
}

/** One call of an effect tool. */
export interface EffectCall<INPUT = unknown, OUTPUT = unknown> {
  readonly tool: EffectTool<INPUT, OUTPUT>;
  readonly toolName: string;
  readonly input: INPUT;
  /** The run's context; `alreadyApplied` and `execute` get it with `ctx.effect` set. */
  readonly ctx: ToolContext;
  readonly options: ToolExecutionOptions<ToolContext>;
  /** The effect key, when already computed (the Temporal engine computes it once per step). */
  readonly key?: string;
  /** With `key`: the input's fingerprint, when computing the key produced it (see `resolveCallKey`). */
  readonly fingerprint?: string;
  /** The model step of the call, when the caller knows it without counting `options.messages` (see `stepIndex`). */
  readonly step?: number;
  /** A compensation: the key of the effect it undoes (`ctx.effect.compensates`). */
  readonly compensates?: string;
}

/** How a call ended: its result, the report, and the record still to write when the write failed. */
export interface EffectResolution<OUTPUT = unknown> {
  readonly result: OUTPUT;
  readonly report: EffectCallReport;
  readonly unrecorded?: { readonly key: string; readonly record: EffectRecordInput };
}

/**
 * Runs one effect tool call through the protocol:
 *
 * 1. recorded: a finished record for the key is returned; nothing runs. Stores with claims answer
 *    this from the claim (2), so a new key costs two store writes and no read;
 * 2. claim (claim stores): a lease on the key; a live lease of another attempt is waited for
 *    (up to `busyWaitMs`), never executed beside;
 * 3. remote: `alreadyApplied(key, input, ctx)`; an answer other than `undefined` is recorded
 *    (origin `reconciled`) and returned;
 * 4. execute: the claim is checked one last time and `ctx.run.signal` checked, then `execute` runs
 *    (an async iterable passes each value to `onChunk`; its last value is the result);
 * 5. record (origin `executed`). A failing write after the effect is logged and the call still
 *    succeeds, with `unrecorded` set so the caller can write it later.
 *
 * `alreadyApplied` and `execute` get the run's context with `ctx.effect` (the key, the claim's
 * fence, the step). A throw in 3 or 4 records nothing and releases the claim, so a later retry can
 * still apply the effect. A store that cannot be read before the effect fails the call
 * (`EffectStoreError`, retryable) and nothing runs. Identical calls (same store, same key) in
 * flight in this process at the same time share one application; the sharers report `recorded`.
 */
export async function applyEffect<INPUT, OUTPUT>(
  call: EffectCall<INPUT, OUTPUT>,
  env: EffectEnv,
  onChunk?: (chunk: OUTPUT) => void,
): Promise<EffectResolution<OUTPUT>> {
  const anyCall = call as unknown as EffectCall;
  const maybeKey = resolveCallKey(anyCall);
  const callKey = 'then' in maybeKey ? await maybeKey : maybeKey;
  const calls = inFlightCalls(env.store);
  const running = calls.get(callKey.key);
  if (running !== undefined) {
    env.onBusyWait?.(callKey.key);
    tell(env, env.logger ?? consoleEffectLogger, { type: 'claim', result: 'busy' });
    const resolution = (await awaitSharedCall(
      running,
      callKey.key,
      env.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS,
      call.ctx.run.signal,
    )) as EffectResolution<OUTPUT>;
    return {
      result: resolution.result,
      report: {
        ...resolution.report,
        toolCallId: call.options.toolCallId,
        outcome: 'recorded',
        attempts: env.attempt ?? 1,
      },
    };
  }
  const applying = runProtocol(toApplying(anyCall, callKey, env, onChunk as ((chunk: unknown) => void) | undefined));
  calls.set(callKey.key, applying);
  try {
    return (await applying) as EffectResolution<OUTPUT>;
  } finally {
    calls.delete(callKey.key);
  }
}

/** One call on its way through the protocol: the call, its key, and its settings with their defaults. */
interface Applying {
  readonly call: EffectCall;
  readonly key: string;
  /**
   * The input's fingerprint, recorded with the claim and the record (the one the key came with,
   * else hashed here); none for an input canonical JSON refuses.
   */
  readonly fingerprint: string | undefined;
  readonly env: EffectEnv;
  readonly attempt: number;
  readonly logger: EffectLogger;
  readonly abortGraceMs: number;
  readonly signal: AbortSignal;
  readonly onChunk: ((chunk: unknown) => void) | undefined;
  /** Tells `env.observe` an event; never throws. */
  readonly tell: (event: EffectEvent) => void;
}

function toApplying(
  call: EffectCall,
  { key, fingerprint }: CallKey,
  env: EffectEnv,
  onChunk: ((chunk: unknown) => void) | undefined,
): Applying {
  return {
    call,
    key,
    fingerprint: fingerprint ?? safeFingerprint(call.input),
    env,
    attempt: env.attempt ?? 1,
    logger: env.logger ?? consoleEffectLogger,
    abortGraceMs: abortGraceOption('applyEffect', env.abortGraceMs),
    signal: call.ctx.run.signal,
    onChunk,
    tell: (event) => tell(env, env.logger ?? consoleEffectLogger, event),
  };
}

function tell(env: EffectEnv, logger: EffectLogger, event: EffectEvent): void {
  if (env.observe === undefined) return;
  try {
    env.observe(event);
  } catch (error) {
    logger.warn('An effect observer threw; the call goes on without it.', {
      event: event.type,
      error: describeError(error),
    });
  }
}

function runProtocol(p: Applying): Promise<EffectResolution> {
  const { store } = p.env;
  return hasClaims(store) ? withClaims(p, store) : withoutClaims(p, store);
}

/**
 * A store with claims. The claim answers "recorded" itself, so the common path (a new key) takes
 * one round trip less than a read first: claim, complete. Its lease is kept alive from the claim
 * until the effect returned, so a slow `alreadyApplied` keeps it too; a throw gives it back.
 */
async function withClaims(p: Applying, store: IEffectStore & EffectClaims): Promise<EffectResolution> {
  const { call, key, env } = p;
  const claim = await Claim.acquire(
    store,
    key,
    {
      owner: env.owner ?? nextOwner(),
      leaseMs: env.leaseMs ?? DEFAULT_LEASE_MS,
      toolName: call.toolName,
      runId: call.ctx.run.runId,
      attempt: p.attempt,
      fingerprint: p.fingerprint,
    },
    {
      busyWaitMs: env.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS,
      signal: p.signal,
      ...(env.onBusyWait === undefined && env.observe === undefined
        ? {}
        : {
            onBusy: () => {
              env.onBusyWait?.(key);
              p.tell({ type: 'claim', result: 'busy' });
            },
          }),
    },
  );
  if (!(claim instanceof Claim)) return recorded(p, claim);
  const stop = claim.keepAlive(p.signal, p.abortGraceMs, p.logger);
  let applied: Applied;
  try {
    p.tell({ type: 'claim', result: claim.takeover ? 'takeover' : 'acquired', fence: claim.token.fence });
    // Inside the try: a context whose spread throws (a user's getter) gives the claim back.
    const ctx = callContext(p, claim.token.fence);
    const remote = call.tool.alreadyApplied === undefined ? undefined : await remoteCheck(p, ctx);
    if (remote !== undefined) applied = remote;
    else {
      const finished = await claim.assertOwned();
      if (finished !== undefined) {
        // A late attempt of the same effect recorded it while this one checked remotely: its record is the answer.
        stop();
        return recorded(p, finished);
      }
      p.signal.throwIfAborted();
      // A loss the keep-alive learned since that check (a microtask ago) counts too.
      if (!claim.held) throw new EffectClaimLostError(key);
      applied = await execute(p, ctx);
    }
  } catch (error) {
    stop();
    await claim.release(p.logger);
    throw error;
  }
  stop();
  return record(p, applied, {
    write: (input) => claim.complete(input),
    // Given back at once, so the next call asks alreadyApplied instead of waiting out this lease.
    giveBack: () => claim.release(p.logger),
  });
}

/** A store without claims (`get` and `put` only): read, remote check, execute, first-writer-wins put. */
async function withoutClaims(p: Applying, store: IEffectStore): Promise<EffectResolution> {
  let existing: EffectRecord | undefined;
  try {
    existing = await store.get(p.key);
  } catch (error) {
    throw storeFailure(error, p.key, 'read');
  }
  if (existing !== undefined) return recorded(p, existing);
  const { call } = p;
  const ctx = callContext(p, undefined);
  let applied = call.tool.alreadyApplied === undefined ? undefined : await remoteCheck(p, ctx);
  if (applied === undefined) {
    p.signal.throwIfAborted();
    applied = await execute(p, ctx);
  }
  return record(p, applied, {
    write: async (input) => (await store.put(p.key, input)) ?? undefined,
    giveBack: () => Promise.resolve(),
  });
}

/** What step 3 found or step 4 returned. */
interface Applied {
  readonly origin: EffectOrigin;
  readonly result: unknown;
}

/** The context `alreadyApplied` and `execute` get: the run's, with `ctx.effect`. */
function callContext({ call, key }: Applying, fence: number | undefined): ToolContext {
  const step = call.step ?? stepIndex(call.options);
  const undoes = call.compensates === undefined ? {} : { compensates: call.compensates };
  return effectCallContext(call.ctx, fence === undefined ? { key, step, ...undoes } : { key, fence, step, ...undoes });
}

/** Step 3: what the tool's `alreadyApplied` found, or `undefined` when it has no answer. */
async function remoteCheck({ call, key, tell }: Applying, ctx: ToolContext): Promise<Applied | undefined> {
  const found = await call.tool.alreadyApplied?.(key, call.input, ctx);
  tell({ type: 'alreadyApplied', result: found === undefined ? 'nothing' : 'found' });
  return found === undefined ? undefined : { origin: 'reconciled', result: found };
}

/** Step 4: `execute`, told to the observer as it starts and ends. */
async function execute({ call, onChunk, tell }: Applying, ctx: ToolContext): Promise<Applied> {
  tell({ type: 'execute', phase: 'start' });
  let result: unknown;
  try {
    result = await runExecute(call, ctx, onChunk);
  } catch (error) {
    tell({ type: 'execute', phase: 'end', error });
    throw error;
  }
  tell({ type: 'execute', phase: 'end' });
  return { origin: 'executed', result };
}

/** Where step 5 writes the record, and how it gives the key back when the write failed. */
interface RecordWriter {
  write(input: EffectRecordInput): Promise<EffectRecord | undefined>;
  giveBack(): Promise<void>;
}

/**
 * Step 5: records what the effect returned and answers the call with the stored result. A failing
 * write is logged; the call still succeeds, with `unrecorded` set.
 */
async function record(p: Applying, applied: Applied, writer: RecordWriter): Promise<EffectResolution> {
  const { call, key, logger } = p;
  const unserializable = unserializableReason(applied.result);
  if (unserializable !== undefined) {
    // Applied, but neither recordable nor sendable: record the key as done, with the reason in a
    // field of its own (a mark inside the result could be any execute's real result), so no retry
    // and no later call applies the effect again.
    try {
      await writer.write({ ...recordInput(p, undefined, applied.origin), unserializable });
    } catch (error) {
      logger.warn(
        `Effect "${key}" was applied, its result is not serialisable, and the key could not be marked done.`,
        { key, error: describeError(error) },
      );
      await writer.giveBack();
    }
    throw new EffectResultNotSerializableError({ toolName: call.toolName, key, reason: unserializable });
  }
  const input = recordInput(p, applied.result, applied.origin);
  let stored: EffectRecord | undefined;
  try {
    stored = await writer.write(input);
  } catch (error) {
    logger.warn(
      `Effect "${key}" was applied but its result could not be recorded; the call succeeds and alreadyApplied guards the next retry.`,
      { key, error: describeError(error) },
    );
    try {
      p.env.onRecordFailed?.(key, input, error);
    } catch (hookError) {
      logger.warn('onRecordFailed threw; the call goes on without it.', { key, error: describeError(hookError) });
    }
    p.tell({ type: 'record', result: 'pending' });
    await writer.giveBack();
    return { result: applied.result, report: reportOf(p, applied.origin, true), unrecorded: { key, record: input } };
  }
  p.tell({ type: 'record', result: 'done' });
  return {
    result: stored === undefined ? applied.result : recordedResult(stored, call, key),
    report: reportOf(p, applied.origin),
  };
}

function recordInput(
  { call, attempt, fingerprint }: Applying,
  result: unknown,
  origin: EffectOrigin,
): EffectRecordInput {
  return {
    toolName: call.toolName,
    result,
    origin,
    runId: call.ctx.run.runId,
    attempt,
    fingerprint,
    ...(result === undefined ? { resultUndefined: true } : {}),
  };
}

function recorded(p: Applying, record: EffectRecord): EffectResolution {
  return { result: recordedResult(record, p.call, p.key), report: reportOf(p, 'recorded') };
}

function reportOf({ call, key, attempt }: Applying, outcome: EffectOutcome, recordPending?: boolean): EffectCallReport {
  const report = { key, toolName: call.toolName, toolCallId: call.options.toolCallId, outcome, attempts: attempt };
  return recordPending ? { ...report, recordPending } : report;
}

function safeFingerprint(input: unknown): string | undefined {
  try {
    return inputFingerprint(input);
  } catch {
    return undefined;
  }
}
