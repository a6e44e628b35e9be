import type { ToolExecutionOptions } from 'ai';
import type { ToolContext } from '../context/tool-context.js';
import { EffectClaimLostError, EffectResultNotSerializableError } from '../errors/errors.js';
import type { ClaimRequest, EffectRecord, EffectRecordInput, IEffectStore } from '../stores/effect-store.js';
import { hasClaims } from '../stores/effect-store.js';
import type { EffectTool } from './define-effect-tool.js';
import { Claim, nextOwner } from './claim.js';
import { abortGraceOption, DEFAULT_BUSY_WAIT_MS, DEFAULT_LEASE_MS } from './effect-settings.js';
import { awaitSharedCall } from './shared-call.js';
import { assertEffectKey, defaultEffectKey, inputFingerprint } from './effect-key.js';
import type { EffectCallReport, EffectLogger, EffectOutcome } from './effect-report.js';
import { recordedResult, runExecute, unserializableReason } from './effect-result.js';
import { consoleEffectLogger } from './effect-report.js';
import { inFlightCalls } from './in-flight.js';
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
}

/** One call of an effect tool. */
export interface EffectCall<INPUT = unknown, OUTPUT = unknown> {
  readonly tool: EffectTool<INPUT, OUTPUT>;
  readonly toolName: string;
  readonly input: INPUT;
  readonly ctx: ToolContext;
  readonly options: ToolExecutionOptions<ToolContext>;
  /** The effect key, when already computed (the Temporal engine computes it once per step). */
  readonly key?: string;
}

/** How a call ended: its result, the report, and the record still to write when the write failed. */
export interface EffectResolution<OUTPUT = unknown> {
  readonly result: OUTPUT;
  readonly report: EffectCallReport;
  readonly unrecorded?: { readonly key: string; readonly record: EffectRecordInput };
}

/** The effect key of a call: the tool's `effectKey`, checked, or the default key. */
export async function resolveEffectKey(call: EffectCall): Promise<string> {
  return effectKeyOfCall(call);
}

/** {@link resolveEffectKey} without a promise when no hook has to be awaited (the common case). */
function effectKeyOfCall(call: EffectCall): string | Promise<string> {
  const { tool, toolName, input, ctx, options } = call;
  if (call.key !== undefined) return assertEffectKey(toolName, call.key);
  if (tool.effectKey === undefined) return defaultEffectKey(ctx.run.runId, toolName, input);
  const custom = tool.effectKey(input, ctx, options);
  return typeof custom === 'string'
    ? assertEffectKey(toolName, custom)
    : Promise.resolve(custom).then((key) => assertEffectKey(toolName, key));
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
 * 4. execute: the claim is renewed and `ctx.run.signal` checked, then `execute` runs (an async
 *    iterable passes each value to `onChunk`; its last value is the result);
 * 5. record (origin `executed`). A failing write after the effect is logged and the call still
 *    succeeds, with `unrecorded` set so the caller can write it later.
 *
 * A throw in 3 or 4 records nothing and releases the claim, so a later retry can still apply the
 * effect. A store that cannot be read before the effect fails the call (`EffectStoreError`,
 * retryable) and nothing runs. Identical calls (same store, same key) in flight in this process at
 * the same time share one application; the sharers report `recorded`.
 */
export async function applyEffect<INPUT, OUTPUT>(
  call: EffectCall<INPUT, OUTPUT>,
  env: EffectEnv,
  onChunk?: (chunk: OUTPUT) => void,
): Promise<EffectResolution<OUTPUT>> {
  const anyCall = call as unknown as EffectCall;
  const maybeKey = effectKeyOfCall(anyCall);
  const key = typeof maybeKey === 'string' ? maybeKey : await maybeKey;
  const calls = inFlightCalls(env.store);
  const running = calls.get(key);
  if (running !== undefined) {
    env.onBusyWait?.(key);
    const resolution = (await awaitSharedCall(
      running,
      key,
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
  const applying = runProtocol(anyCall, key, env, onChunk as ((chunk: unknown) => void) | undefined);
  calls.set(key, applying);
  try {
    return (await applying) as EffectResolution<OUTPUT>;
  } finally {
    calls.delete(key);
  }
}

async function runProtocol(
  call: EffectCall,
  key: string,
  env: EffectEnv,
  onChunk: ((chunk: unknown) => void) | undefined,
): Promise<EffectResolution> {
  const { store } = env;
  const abortGraceMs = abortGraceOption('applyEffect', env.abortGraceMs);
  const claims = hasClaims(store) ? store : undefined;
  const logger = env.logger ?? consoleEffectLogger;
  const attempt = env.attempt ?? 1;

  // A claim store answers "recorded" from the claim itself, so the common path (a new key) takes
  // one round trip less: claim, complete. Plain stores are read first.
  if (claims === undefined) {
    let existing: EffectRecord | undefined;
    try {
      existing = await store.get(key);
    } catch (error) {
      throw storeFailure(error, key, 'read');
    }
    if (existing !== undefined) return recorded(existing, call, key, attempt);
  }

  // A default key ends in the input fingerprint: reuse it instead of hashing the input a second time.
  const fingerprint =
    call.tool.effectKey === undefined && call.key === undefined ? key.slice(-64) : safeFingerprint(call.input);
  let lease: Claim | undefined;
  if (claims !== undefined) {
    const request: ClaimRequest = {
      owner: env.owner ?? nextOwner(),
      leaseMs: env.leaseMs ?? DEFAULT_LEASE_MS,
      toolName: call.toolName,
      runId: call.ctx.run.runId,
      attempt,
      fingerprint,
    };
    const claimed = await Claim.acquire(claims, key, request, {
      busyWaitMs: env.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS,
      signal: call.ctx.run.signal,
      ...(env.onBusyWait === undefined ? {} : { onBusy: () => env.onBusyWait?.(key) }),
    });
    if (!(claimed instanceof Claim)) return recorded(claimed, call, key, attempt);
    lease = claimed;
  }

  const recordInput = (result: unknown, origin: 'executed' | 'reconciled'): EffectRecordInput => ({
    toolName: call.toolName,
    result,
    origin,
    runId: call.ctx.run.runId,
    attempt,
    fingerprint,
    ...(result === undefined ? { resultUndefined: true } : {}),
  });

  let origin: 'executed' | 'reconciled' = 'executed';
  let result: unknown;
  // The lease is renewed from the claim until the effect returns, so a slow alreadyApplied keeps it too.
  const stopKeeping = lease?.keepAlive(call.ctx.run.signal, abortGraceMs, logger);
  let finishedElsewhere: EffectRecord | undefined;
  try {
    const remote =
      call.tool.alreadyApplied === undefined ? undefined : await call.tool.alreadyApplied(key, call.input, call.ctx);
    if (remote !== undefined) {
      origin = 'reconciled';
      result = remote;
    } else {
      if (lease !== undefined) finishedElsewhere = await lease.assertOwned();
      if (finishedElsewhere === undefined) {
        call.ctx.run.signal.throwIfAborted();
        if (lease !== undefined && !lease.held) throw new EffectClaimLostError(key);
        origin = 'executed';
        result = await runExecute(call, key, lease?.token.fence, onChunk);
      }
    }
  } catch (error) {
    stopKeeping?.();
    await lease?.release(logger);
    throw error;
  }
  stopKeeping?.();
  // A late attempt of the same effect recorded it while this one checked remotely: its record is the answer.
  if (finishedElsewhere !== undefined) return recorded(finishedElsewhere, call, key, attempt);
  const unserializable = unserializableReason(result);
  if (unserializable !== undefined) {
    // Applied, but neither recordable nor sendable: record the key as done, with the reason in a
    // field of its own (a mark inside the result could be any execute's real result), so no retry
    // and no later call applies the effect again.
    const tombstone: EffectRecordInput = { ...recordInput(undefined, origin), unserializable };
    try {
      await writeRecord(store, lease, key, tombstone);
    } catch (error) {
      logger.warn(
        `Effect "${key}" was applied, its result is not serialisable, and the key could not be marked done.`,
        { key, error: describeError(error) },
      );
      await lease?.release(logger);
    }
    throw new EffectResultNotSerializableError({ toolName: call.toolName, key, reason: unserializable });
  }

  const record = recordInput(result, origin);
  try {
    const winner = await writeRecord(store, lease, key, record);
    return {
      result: winner === undefined ? result : recordedResult(winner, call, key),
      report: reportOf(call, key, origin, attempt),
    };
  } catch (error) {
    logger.warn(
      `Effect "${key}" was applied but its result could not be recorded; the call succeeds and alreadyApplied guards the next retry.`,
      { key, error: describeError(error) },
    );
    env.onRecordFailed?.(key, record, error);
    // Give the key back at once, so the next call asks alreadyApplied instead of waiting out this lease.
    await lease?.release(logger);
    return { result, report: reportOf(call, key, origin, attempt, true), unrecorded: { key, record } };
  }
}

function reportOf(
  call: EffectCall,
  key: string,
  outcome: EffectOutcome,
  attempts: number,
  recordPending?: boolean,
): EffectCallReport {
  const report = { key, toolName: call.toolName, toolCallId: call.options.toolCallId, outcome, attempts };
  return recordPending ? { ...report, recordPending } : report;
}

function recorded(record: EffectRecord, call: EffectCall, key: string, attempt: number): EffectResolution {
  return { result: recordedResult(record, call, key), report: reportOf(call, key, 'recorded', attempt) };
}

async function writeRecord(
  store: IEffectStore,
  lease: Claim | undefined,
  key: string,
  record: EffectRecordInput,
): Promise<EffectRecord | undefined> {
  if (lease !== undefined) return lease.complete(record);
  return (await store.put(key, record)) ?? undefined;
}

function safeFingerprint(input: unknown): string | undefined {
  try {
    return inputFingerprint(input);
  } catch {
    return undefined;
  }
}
