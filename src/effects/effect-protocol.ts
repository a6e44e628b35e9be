import { randomUUID } from 'node:crypto';
import type { ToolExecutionOptions } from 'ai';
import type { ToolContext } from '../context/tool-context.js';
import { ChamviError } from '../errors/chamvi-error.js';
import {
  EffectBusyError,
  EffectClaimLostError,
  EffectResultNotSerializableError,
  EffectStoreError,
} from '../errors/errors.js';
import { canonicalJson } from '../json/canonical-json.js';
import type {
  ClaimToken,
  EffectClaims,
  EffectRecord,
  EffectRecordInput,
  IEffectStore,
} from '../stores/effect-store.js';
import { hasClaims } from '../stores/effect-store.js';
import type { EffectTool } from './define-effect-tool.js';
import { assertEffectKey, defaultEffectKey, inputFingerprint } from './effect-key.js';
import { withEffectKey } from './effect-key-of.js';
import type { EffectCallReport, EffectLogger, EffectOutcome } from './effect-report.js';
import { consoleEffectLogger } from './effect-report.js';
import { shareInFlight } from './in-flight.js';

/** Where and how one effect call runs. Only `store` is required. */
export interface EffectEnv {
  readonly store: IEffectStore;
  /** Default: `console.warn`. */
  readonly logger?: EffectLogger;
  /** The attempt this call is (Temporal's activity attempt). Default 1. */
  readonly attempt?: number;
  /** Claim owner token of this attempt. Default: unique per call (a random per-process prefix and a counter). */
  readonly owner?: string;
  /** Lease on the key while the effect runs, in ms (claim stores only). Renewed every third of it. Default 60 000. */
  readonly leaseMs?: number;
  /** How long to wait for another attempt's live claim before failing with `EffectBusyError`, in ms. Default 10 000. */
  readonly busyWaitMs?: number;
  /** Called right before `execute`, after the claim was renewed and the signal checked; throwing stops the call. */
  readonly beforeEffect?: (key: string) => Promise<void> | void;
  /** Called when the result could not be recorded after the effect (the call still succeeds). */
  readonly onRecordFailed?: (key: string, record: EffectRecordInput, error: unknown) => void;
  /**
   * Fault injection for crash tests (`@chamvi/temporal/testing`): called at each named point of the
   * protocol; throwing (or killing the process) there simulates a crash at that point.
   */
  readonly fault?: (point: FaultPoint, key: string) => void | Promise<void>;
}

/**
 * Named points of the protocol, in order, where a crash can be injected: before the store read;
 * in `alreadyApplied` (before it runs); before the effect (`execute`); after the effect, before
 * `execute` returns (the crash window); before the record; during the record (the write fails).
 */
export type FaultPoint =
  'before-store-read' | 'in-already-applied' | 'before-effect' | 'after-effect' | 'before-record' | 'during-record';

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

const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_BUSY_WAIT_MS = 10_000;

// Claim owner tokens only need to be unique: one random prefix per process and a counter, not a UUID per call.
const OWNER_PREFIX = randomUUID();
let ownerSeq = 0;
const nextOwner = (): string => `${OWNER_PREFIX}:${++ownerSeq}`;

/** The effect key of a call: the tool's `effectKey`, checked, or the default key. */
export async function resolveEffectKey(call: EffectCall): Promise<string> {
  const { tool, toolName, input, ctx, options } = call;
  if (call.key !== undefined) return assertEffectKey(toolName, call.key);
  if (tool.effectKey === undefined) return defaultEffectKey(ctx.run.runId, toolName, input);
  return assertEffectKey(toolName, await tool.effectKey(input, ctx, options));
}

/**
 * Runs one effect tool call through the protocol:
 *
 * 1. recorded: a finished record for the key is returned; nothing runs;
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
  const key = await resolveEffectKey(anyCall);
  const { value, shared } = await shareInFlight(env.store, key, () =>
    runProtocol(anyCall, key, env, onChunk as (chunk: unknown) => void),
  );
  const resolution = value as EffectResolution<OUTPUT>;
  if (!shared) return resolution;
  return {
    result: resolution.result,
    report: { ...resolution.report, toolCallId: call.options.toolCallId, outcome: 'recorded' },
  };
}

async function runProtocol(
  call: EffectCall,
  key: string,
  env: EffectEnv,
  onChunk: ((chunk: unknown) => void) | undefined,
): Promise<EffectResolution> {
  const { store } = env;
  const logger = env.logger ?? consoleEffectLogger;
  const attempt = env.attempt ?? 1;
  const report = (outcome: EffectOutcome, recordPending?: boolean): EffectCallReport => ({
    key,
    toolName: call.toolName,
    toolCallId: call.options.toolCallId,
    outcome,
    attempts: attempt,
    ...(recordPending ? { recordPending } : {}),
  });

  if (env.fault) await env.fault('before-store-read', key);
  const existing = await storeRead(() => store.get(key), key, 'read');
  if (existing !== undefined) return { result: recordedResult(existing, call, key), report: report('recorded') };

  // A default key ends in the input fingerprint: reuse it instead of hashing the input a second time.
  const fingerprint =
    call.tool.effectKey === undefined && call.key === undefined ? key.slice(-64) : safeFingerprint(call.input);
  let token: ClaimToken | undefined;
  let lease: Lease | undefined;
  if (hasClaims(store)) {
    const claimed = await claimKey(store, key, call, env, fingerprint);
    if ('record' in claimed) return { result: recordedResult(claimed.record, call, key), report: report('recorded') };
    lease = claimed.lease;
    token = lease.token;
  }

  const leaseMs = env.leaseMs ?? DEFAULT_LEASE_MS;
  const recordInput = (result: unknown, origin: 'executed' | 'reconciled'): EffectRecordInput => ({
    toolName: call.toolName,
    result,
    origin,
    runId: call.ctx.run.runId,
    attempt,
    ...(fingerprint === undefined ? {} : { fingerprint }),
    ...(result === undefined ? { resultUndefined: true } : {}),
  });

  let outcome: { origin: 'executed' | 'reconciled'; result: unknown };
  try {
    // The lease is renewed from the claim until the record, so a slow alreadyApplied keeps it too.
    outcome = await withLeaseRenewal(store, lease, leaseMs, call.ctx.run.signal, logger, async () => {
      if (env.fault) await env.fault('in-already-applied', key);
      const remote =
        call.tool.alreadyApplied === undefined ? undefined : await call.tool.alreadyApplied(key, call.input, call.ctx);
      if (remote !== undefined) return { origin: 'reconciled' as const, result: remote };
      if (lease !== undefined && hasClaims(store)) await assertStillOwner(store, lease, leaseMs);
      call.ctx.run.signal.throwIfAborted();
      await env.beforeEffect?.(key);
      if (env.fault) await env.fault('before-effect', key);
      const executed = await runExecute(call, key, onChunk);
      if (env.fault) await env.fault('after-effect', key);
      return { origin: 'executed' as const, result: executed };
    });
  } catch (error) {
    if (token !== undefined && hasClaims(store)) await releaseQuietly(store, token, logger);
    throw error;
  }
  const { origin, result } = outcome;
  const unserializable = unserializableReason(result);
  if (unserializable !== undefined) {
    // Applied, but neither recordable nor sendable: record the key as done with the error in
    // place of the result, so no retry and no later call applies the effect again.
    const tombstone = recordInput({ [UNSERIALIZABLE_MARK]: unserializable }, origin);
    try {
      await writeRecord(store, key, token, tombstone);
    } catch (error) {
      logger.warn(
        `Effect "${key}" was applied, its result is not serialisable, and the key could not be marked done.`,
        {
          key,
          error: describe(error),
        },
      );
      if (token !== undefined && hasClaims(store)) await releaseQuietly(store, token, logger);
    }
    throw new EffectResultNotSerializableError(call.toolName, key, unserializable);
  }
  if (env.fault) await env.fault('before-record', key);

  const record = recordInput(result, origin);
  try {
    if (env.fault) await env.fault('during-record', key);
    const winner = await writeRecord(store, key, token, record);
    return { result: winner === undefined ? result : recordedResult(winner, call, key), report: report(origin) };
  } catch (error) {
    logger.warn(
      `Effect "${key}" was applied but its result could not be recorded; the call succeeds and alreadyApplied guards the next retry.`,
      { key, error: describe(error) },
    );
    env.onRecordFailed?.(key, record, error);
    // Give the key back at once, so the next call asks alreadyApplied instead of waiting out this lease.
    if (token !== undefined && hasClaims(store)) await releaseQuietly(store, token, logger);
    return { result, report: report(origin, true), unrecorded: { key, record } };
  }
}

async function claimKey(
  store: IEffectStore & EffectClaims,
  key: string,
  call: EffectCall,
  env: EffectEnv,
  fingerprint: string | undefined,
): Promise<{ lease: Lease } | { record: EffectRecord }> {
  const busyWaitMs = env.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS;
  const request = {
    owner: env.owner ?? nextOwner(),
    leaseMs: env.leaseMs ?? DEFAULT_LEASE_MS,
    toolName: call.toolName,
    runId: call.ctx.run.runId,
    attempt: env.attempt ?? 1,
    ...(fingerprint === undefined ? {} : { fingerprint }),
  };
  const started = Date.now();
  for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
    const sent = Date.now();
    const claimed = await storeRead(() => store.claim(key, request), key, 'claim');
    if (claimed.status === 'acquired') return { lease: { token: claimed.token, since: sent } };
    if (claimed.status === 'done') return { record: claimed.record };
    const waited = Date.now() - started;
    if (waited >= busyWaitMs) throw new EffectBusyError(key, waited);
    call.ctx.run.signal.throwIfAborted();
    await sleep(Math.min(pause, claimed.leaseRemainingMs + 1, busyWaitMs - waited));
  }
}

/** A held claim and when its lease last started, measured before the request was sent (so never late). */
interface Lease {
  readonly token: ClaimToken;
  since: number;
}

/**
 * The last check before the effect. Nobody can take a key over before its lease runs out, so a
 * lease younger than half its length needs no round trip; an older one is renewed, and a lost one
 * stops the call before anything is applied.
 */
async function assertStillOwner(store: IEffectStore & EffectClaims, lease: Lease, leaseMs: number): Promise<void> {
  if (Date.now() - lease.since < leaseMs / 2) return;
  const sent = Date.now();
  const renewed = await storeRead(() => store.renew(lease.token, leaseMs), lease.token.key, 'renew');
  if (renewed.status === 'lost') throw new EffectClaimLostError(lease.token.key);
  lease.since = sent;
}

async function withLeaseRenewal<T>(
  store: IEffectStore,
  lease: Lease | undefined,
  leaseMs: number,
  signal: AbortSignal,
  logger: EffectLogger,
  work: () => Promise<T>,
): Promise<T> {
  if (lease === undefined || !hasClaims(store) || leaseMs <= 0) return work();
  const { token } = lease;
  const timer = setInterval(
    () => {
      // A cancelled or timed-out attempt is dead to the engine: let its lease run out so a retry can take over.
      if (signal.aborted) return clearInterval(timer);
      const sent = Date.now();
      store.renew(token, leaseMs).then(
        (renewed) => {
          if (renewed.status === 'ok') lease.since = sent;
          else logger.warn(`Lost the claim on effect "${token.key}" while applying it.`, { key: token.key });
        },
        (error: unknown) =>
          logger.warn(`Could not renew the claim on effect "${token.key}".`, { error: describe(error) }),
      );
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

async function runExecute(
  call: EffectCall,
  key: string,
  onChunk: ((chunk: unknown) => void) | undefined,
): Promise<unknown> {
  // execute sees the very ToolContext the hooks saw, even when the AI SDK handed over a copy it
  // validated against the tool's contextSchema (a zod object strips `run` and the 0.1 guards).
  const options = withEffectKey({ ...call.options, context: call.ctx }, key);
  const produced = call.tool.execute(call.input, options);
  if (!isAsyncIterable<unknown>(produced)) return await produced;
  let last: unknown;
  for await (const chunk of produced) {
    last = chunk;
    onChunk?.(chunk);
  }
  return last;
}

async function writeRecord(
  store: IEffectStore,
  key: string,
  token: ClaimToken | undefined,
  record: EffectRecordInput,
): Promise<EffectRecord | undefined> {
  if (token !== undefined && hasClaims(store)) {
    const completed = await store.complete(token, record);
    // Lost without a winner: another attempt took the key over and is still working, but this effect
    // did happen. A first-writer-wins put records it and ends that claim, so the other attempt's
    // check right before its effect fails instead of applying a second one.
    if (completed.status === 'lost' && completed.record === undefined)
      return (await store.put(key, record)) ?? undefined;
    return completed.record;
  }
  return (await store.put(key, record)) ?? undefined;
}

async function releaseQuietly(
  store: IEffectStore & EffectClaims,
  token: ClaimToken,
  logger: EffectLogger,
): Promise<void> {
  try {
    await store.release(token);
  } catch (error) {
    logger.warn(`Could not release the claim on effect "${token.key}"; it frees itself when its lease expires.`, {
      error: describe(error),
    });
  }
}

async function storeRead<T>(op: () => Promise<T>, key: string, what: string): Promise<T> {
  try {
    return await op();
  } catch (error) {
    if (ChamviError.isInstance(error)) throw error;
    throw new EffectStoreError(
      `Could not ${what} effect "${key}" in the effect store before applying it, so nothing was applied: ${describe(error)}. Check that the store is reachable; the call can be retried.`,
      { cause: error },
    );
  }
}

/** Key of the record result that stands for a result that could not be serialised (the effect is done). */
const UNSERIALIZABLE_MARK = '$chamviUnserializableResult';

/** A recorded result, or the recorded "applied, result not serialisable" error thrown again. */
function recordedResult(record: EffectRecord, call: EffectCall, key: string): unknown {
  const result = record.result as Record<string, unknown> | undefined;
  if (typeof result === 'object' && result !== null && typeof result[UNSERIALIZABLE_MARK] === 'string') {
    throw new EffectResultNotSerializableError(call.toolName, key, result[UNSERIALIZABLE_MARK]);
  }
  return record.result;
}

/** Why `result` cannot become JSON (a BigInt, a cycle), or `undefined` when it can. */
function unserializableReason(result: unknown): string | undefined {
  try {
    JSON.stringify(result);
    return undefined;
  } catch (error) {
    try {
      canonicalJson(result);
    } catch (detailed) {
      return describe(detailed).replace(/^canonicalJson: /, '');
    }
    return describe(error);
  }
}

function safeFingerprint(input: unknown): string | undefined {
  try {
    return inputFingerprint(input);
  } catch {
    return undefined;
  }
}

export function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncIterable<T>)[Symbol.asyncIterator] === 'function'
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
