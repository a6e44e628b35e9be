import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { ToolExecutionOptions, ModelMessage } from 'ai';
import { createToolContext, type ToolContext } from '../src/context/tool-context.js';
import type { EffectLogger } from '../src/effects/effect-report.js';
import { DEFAULT_BUSY_WAIT_MS, DEFAULT_LEASE_MS } from '../src/effects/effect-settings.js';
import type { JsonMessage, RunRef } from '../common/index.js';

/**
 * The ToolContext of the run, as seen from inside an activity. `ctx.run.signal` aborts when
 * Temporal cancels the attempt (news that reaches the worker with heartbeat responses; see
 * {@link keepHeartbeating}) or when the attempt outlives its start-to-close timeout, after which
 * Temporal has already given up on it and may be running the next attempt.
 */
export function activityToolContext(run: RunRef): ToolContext {
  const context = Context.current();
  const deadlineMs = context.info.startToCloseTimeoutMs;
  const signal =
    deadlineMs > 0
      ? AbortSignal.any([context.cancellationSignal, AbortSignal.timeout(deadlineMs)])
      : context.cancellationSignal;
  return createToolContext({
    runId: run.runId,
    agent: run.agent,
    trigger: run.trigger,
    signal,
    ...(run.state !== undefined ? { state: run.state } : {}),
    ...(run.artifacts !== undefined ? { artifacts: run.artifacts } : {}),
  });
}

/** AI SDK call options for a tool call made from an activity. */
export function toolCallOptions(
  toolCallId: string,
  messages: JsonMessage[],
  ctx: ToolContext,
): ToolExecutionOptions<ToolContext> {
  return { toolCallId, messages: messages as unknown as ModelMessage[], abortSignal: ctx.run.signal, context: ctx };
}

/**
 * Heartbeats every third of the heartbeat timeout (every 10 s without one) until stopped, the first
 * one a third of the timeout after the start. The heartbeat is how a worker learns that its attempt
 * was cancelled or timed out, and how Temporal learns quickly that a worker died. None goes out at
 * the start: Temporal counts the heartbeat timeout from the attempt's start anyway, and an attempt
 * shorter than a third of it (most are) then costs no heartbeat round trip to the server.
 */
export function keepHeartbeating(): () => void {
  const context = Context.current();
  const every = Math.max(100, Math.floor((context.info.heartbeatTimeoutMs ?? 30_000) / 3));
  const timer = setInterval(() => context.heartbeat(), every);
  return () => clearInterval(timer);
}

/** Protocol warnings go to the activity's logger (with the workflow and activity attached). */
export function activityLogger(): EffectLogger {
  const log = Context.current().log;
  return {
    warn: (message, meta) => {
      log.warn(message, meta);
    },
  };
}

/** How this activity attempt claims an effect key (see {@link attemptClaim}). */
export interface AttemptClaim {
  readonly logger: EffectLogger;
  readonly attempt: number;
  /** Unique to this attempt, and readable in a store row: workflow id, activity id, attempt. */
  readonly owner: string;
  readonly leaseMs: number;
  readonly busyWaitMs: number;
}

/**
 * The claim settings of the current activity attempt. The lease is no longer than Temporal keeps
 * an attempt alive without news (the heartbeat timeout) or at all (the start-to-close timeout), so
 * a dead or timed-out attempt's lease runs out about when Temporal starts the next attempt; the
 * busy wait is no longer than the lease.
 */
export function attemptClaim(): AttemptClaim {
  const { info } = Context.current();
  const bounds = [info.heartbeatTimeoutMs, info.startToCloseTimeoutMs].filter(
    (ms): ms is number => ms !== undefined && ms > 0,
  );
  const leaseMs = bounds.length === 0 ? DEFAULT_LEASE_MS : Math.min(...bounds);
  return {
    logger: activityLogger(),
    attempt: info.attempt,
    owner: `${info.workflowExecution?.workflowId ?? 'standalone'}/${info.activityId}#${info.attempt}/${randomUUID()}`,
    leaseMs,
    busyWaitMs: Math.min(leaseMs, DEFAULT_BUSY_WAIT_MS),
  };
}
