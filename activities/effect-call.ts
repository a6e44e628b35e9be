import { performance } from 'node:perf_hooks';
import { Context } from '@temporalio/activity';
import { isEffectTool } from '../src/effects/define-effect-tool.js';
import { resolveCallKey } from '../src/effects/effect-key.js';
import { applyEffect, type EffectCall } from '../src/effects/effect-protocol.js';
import { EffectKeyMismatchError, EffectResultTooLargeError, InvalidEffectToolError } from '../src/errors/errors.js';
import type { IEffectStore } from '../src/stores/effect-store.js';
import type { EffectCallReport } from '../src/effects/effect-report.js';
import type { PlannedCallReport, ToolCallInput, ToolCallResult } from '../common/index.js';
import { attemptClaim, keepHeartbeating } from './activity-context.js';
import type { AgentRegistry } from './agent-registry.js';
import { countBusyWait, countRecordRetry, observeEffectCall, type EffectCallObservation } from './effect-telemetry.js';
import { withFailureMapping } from './failures.js';
import { toModelOutput } from './model-output.js';
import { EffectSpan } from './tracing/effect-span.js';

/** Worker settings of the effect-call activity. */
export interface EffectCallSettings {
  /**
   * How long an effect key stays claimed after the attempt was cancelled or timed out while its
   * `execute` still runs, in ms. Default 120 000 (see `EffectEnv.abortGraceMs`): until then a
   * retry elsewhere waits and finds the record; past it the claim is released with a warning.
   */
  readonly abortGraceMs?: number;
  /**
   * Whether the worker's data converter offloads large payloads (External Storage): then a result
   * over Temporal's payload limit travels as a reference and is not refused.
   */
  readonly offloadsLargePayloads?: () => boolean;
}

/** Whether the workflow planned the call (its key and conversation in the input): it knows key, tool and call id. */
function planned(input: ToolCallInput): boolean {
  return input.key !== undefined && input.conversation !== undefined;
}

function compact(report: EffectCallReport): PlannedCallReport {
  return {
    outcome: report.outcome,
    attempts: report.attempts,
    ...(report.recordPending === true ? { recordPending: true } : {}),
  };
}

/** Temporal's default payload size limit (the server's `limit.blobSize.error`, 2 MiB): a larger tool result is refused. */
export const MAX_RESULT_BYTES = 2 * 1024 * 1024;

/**
 * The effect-call activity: one call of an effect tool, running the whole effect protocol inside
 * the attempt. When a worker dies after the effect and before the record, Temporal retries this
 * activity (after the heartbeat timeout), and the retry goes through `alreadyApplied` before it
 * may execute again.
 *
 * The claim's lease is the heartbeat timeout or the start-to-close timeout, whichever is shorter; a
 * live attempt renews it, and stops renewing once it learns (by heartbeat) that it was cancelled or
 * timed out, so a zombie attempt finds its claim lost at the check right before the effect.
 *
 * The input is parsed by the tool's schema on this worker before anything else (`parseToolInput`):
 * one it refuses never reaches `effectKey`, `alreadyApplied` or `execute`, and the model is told.
 *
 * Every attempt logs one line (tool, key, outcome, attempt, duration) through the activity logger
 * and is counted in the metrics of `effect-telemetry.ts`, through Temporal's metric meter. With
 * OpenTelemetry, the attempt is the span `chamvi.effect <tool>` (see {@link EffectSpan}), active
 * while the protocol runs and while the line is logged, so the line carries its trace and span ids.
 */
export function createEffectCallActivity(
  registry: AgentRegistry,
  store: IEffectStore,
  settings: EffectCallSettings = {},
) {
  return async function effectCall(input: ToolCallInput): Promise<ToolCallResult> {
    const started = performance.now();
    const attempt = Context.current().info.attempt;
    const span = await EffectSpan.start({
      tool: input.toolName,
      toolCallId: input.toolCallId,
      agent: input.agent,
      runId: input.runId,
      attempt,
      ...(input.key !== undefined ? { key: input.key } : {}),
      ...(input.approval !== undefined ? { decidedBy: input.approval.decidedBy } : {}),
    });
    const observe = (outcome: EffectCallObservation['outcome'], key: string | undefined, error?: unknown): void => {
      observeEffectCall({
        tool: input.toolName,
        key,
        outcome,
        attempt,
        durationMs: Math.round(performance.now() - started),
        ...(error !== undefined ? { error } : {}),
      });
      span.end(outcome, error);
    };
    return span.run(async () => {
      const answered = withFailureMapping(async () => {
        const { tool, ctx, options, input: parsed } = await registry.resolveCall(input);
        if (!isEffectTool(tool)) {
          throw new InvalidEffectToolError(
            `Tool "${input.toolName}" of agent "${input.agent}" is not an effect tool on this worker; workers of one task queue must register the same agents.`,
          );
        }
        const call: EffectCall = {
          tool,
          toolName: input.toolName,
          input: parsed,
          ctx,
          options,
          // Known from the conversation's reference, so the messages need not be read to count it.
          ...(input.conversation !== undefined ? { step: input.conversation.assistantMessages } : {}),
        };
        // The key the workflow planned is checked, never trusted: approvals are bound to it, so an
        // activity input pairing one call's key with another input must not run under that approval.
        const { key, fingerprint } = await resolveCallKey(call);
        if (input.key !== undefined && input.key !== key)
          throw new EffectKeyMismatchError({ toolName: input.toolName, given: input.key, computed: key });
        if (input.key === undefined) span.keyed(key);
        // Heartbeats from here on: a dead worker is noticed within the heartbeat timeout, and a
        // cancellation reaches ctx.run.signal, whatever part of the protocol is running.
        const stop = keepHeartbeating();
        try {
          const resolved = await applyEffect(
            { ...call, key, ...(fingerprint !== undefined ? { fingerprint } : {}) },
            {
              store,
              ...attemptClaim(),
              ...(settings.abortGraceMs !== undefined ? { abortGraceMs: settings.abortGraceMs } : {}),
              onBusyWait: () => countBusyWait(input.toolName),
              observe: span.observe,
            },
          );
          if (resolved.unrecorded !== undefined) countRecordRetry(input.toolName);
          const output = await toModelOutput(tool, input.toolCallId, parsed, resolved.result);
          const answer: ToolCallResult = {
            output,
            // A planned call's report names only what its plan does not: each byte is in the history.
            report: planned(input) ? compact(resolved.report) : resolved.report,
            ...(resolved.unrecorded !== undefined ? { unrecorded: resolved.unrecorded } : {}),
            ...(input.includeResult === true ? { result: resolved.result } : {}),
          };
          // Over Temporal's payload limit the completion would be refused and the attempt retried
          // forever (the result is recorded, so never re-applied): fail it for good, by name, unless
          // External Storage offloads it (the history then holds a reference).
          const bytes = Buffer.byteLength(JSON.stringify(answer));
          if (bytes > MAX_RESULT_BYTES && settings.offloadsLargePayloads?.() !== true) {
            throw new EffectResultTooLargeError({
              toolName: input.toolName,
              key: resolved.report.key,
              bytes,
              limit: MAX_RESULT_BYTES,
            });
          }
          return answer;
        } finally {
          stop();
        }
      });
      return answered.then(
        (answer) => {
          observe(answer.report?.outcome ?? 'executed', answer.report?.key ?? input.key);
          return answer;
        },
        (error: unknown) => {
          observe('failed', input.key, error);
          throw error;
        },
      );
    });
  };
}
