import type { ActivityOptions } from '@temporalio/common';

/**
 * Activity options in their JSON form (durations as ms numbers or Temporal duration strings), as
 * they travel in workflow input and in a step's plan. Turned into Temporal's `ActivityOptions` by
 * {@link toActivityOptions}.
 * @public
 */
export interface JsonActivityOptions {
  /** Temporal's start-to-close timeout of one attempt (ms or a duration string such as `'10 minutes'`). */
  readonly startToCloseTimeout?: string | number;
  /** Temporal's schedule-to-close timeout: all attempts together (ms or a duration string). */
  readonly scheduleToCloseTimeout?: string | number;
  /** Temporal's heartbeat timeout (ms or a duration string): how soon a crashed worker's attempt is retried. */
  readonly heartbeatTimeout?: string | number;
  /** Temporal's retry policy, as JSON (durations as ms or duration strings). */
  readonly retry?: {
    readonly initialInterval?: string | number;
    readonly backoffCoefficient?: number;
    readonly maximumInterval?: string | number;
    readonly maximumAttempts?: number;
    readonly nonRetryableErrorTypes?: string[];
  };
  /** The task queue the activity is scheduled on. Default: the workflow's. */
  readonly taskQueue?: string;
}

/**
 * Options of a tool's activity (`chamvi.effectCall`, `chamvi.toolCall`), from a registration's
 * `toolDefaults` and `tools[name]`. For an effect tool the heartbeat timeout (or the start-to-close
 * timeout, if shorter) is also the lease on its effect key.
 * @public
 */
export type ToolActivityOptions = JsonActivityOptions;

/** Options of the model-step activity (`chamvi.modelStep`): the same fields as a tool's, other defaults. @public */
export type ModelStepActivityOptions = JsonActivityOptions;

/** Options of the effect-store and approval-verification activities (`chamvi.recordEffect`, `chamvi.verifyApproval`). @public */
export type StoreActivityOptions = JsonActivityOptions;

/**
 * Default options of the model-step activity: a model call may be slow, and provider errors
 * (rate limits, 5xx) are worth retrying with backoff. The step heartbeats while the provider call
 * is in flight, so a worker that dies during it is noticed after the heartbeat timeout (as for
 * tools), not after the start-to-close timeout. Provider errors no retry can fix (a missing or
 * refused API key, an unknown model, an invalid request) fail the run at once; invalid model
 * output never reaches a retry: it goes back to the model as a tool error.
 */
export const DEFAULT_MODEL_STEP_OPTIONS: ModelStepActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
};

/**
 * Default options of tool and effect-call activities. The heartbeat timeout is what detects a
 * crashed worker quickly (and bounds the lease on the effect key); the retry policy is what drives
 * the crash-window reconciliation through `alreadyApplied`.
 */
export const DEFAULT_TOOL_OPTIONS: ToolActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
};

/** Default options of the effect-store record activity: retried until the record is durable. */
export const DEFAULT_STORE_OPTIONS: StoreActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
};

/**
 * Default options of the approval-verification activity (`chamvi.verifyApproval`), under the
 * run's `activityOptions.store`: at most 3 attempts within a minute. It answers every token with
 * a verdict, so an attempt fails only when the worker does (a crash, a bug); then the decision is
 * refused as not verified, the call keeps waiting, and the approver can send it again, instead
 * of the decision hanging on retries.
 */
export const DEFAULT_VERIFY_APPROVAL_OPTIONS: StoreActivityOptions = {
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
};

/**
 * Merges layers of activity options: a later layer wins field by field, and `retry` is merged field
 * by field too. A field that is `undefined` in a layer, and a layer that is `undefined`, change
 * nothing: an explicit `undefined` (a registration's `{ startToCloseTimeout: undefined }`, say)
 * keeps what the layers before it said instead of wiping a default.
 */
export function mergeActivityOptions(...layers: ReadonlyArray<JsonActivityOptions | undefined>): JsonActivityOptions {
  const merged: Record<string, unknown> = {};
  const retry: Record<string, unknown> = {};
  for (const layer of layers) {
    if (layer === undefined || layer === null) continue;
    for (const [field, value] of Object.entries(layer)) {
      if (value !== undefined && field !== 'retry') merged[field] = value;
    }
    for (const [field, value] of Object.entries(layer.retry ?? {})) {
      if (value !== undefined) retry[field] = value;
    }
  }
  return Object.keys(retry).length > 0 ? { ...merged, retry } : merged;
}

/**
 * Temporal's ActivityOptions from layers of JSON options, merged by {@link mergeActivityOptions}
 * (later wins, field by field, `undefined` ignored). The catalogue's non-retryable failure types
 * are not added to `retry.nonRetryableErrorTypes`: the activities fail them non-retryably
 * themselves, and the list would repeat in every scheduled activity of the history.
 */
export function toActivityOptions(...layers: ReadonlyArray<JsonActivityOptions | undefined>): ActivityOptions {
  const merged = mergeActivityOptions(...layers);
  const retry = merged.retry ?? {};
  return {
    ...(merged.startToCloseTimeout !== undefined ? { startToCloseTimeout: merged.startToCloseTimeout } : {}),
    ...(merged.scheduleToCloseTimeout !== undefined ? { scheduleToCloseTimeout: merged.scheduleToCloseTimeout } : {}),
    ...(merged.heartbeatTimeout !== undefined ? { heartbeatTimeout: merged.heartbeatTimeout } : {}),
    ...(merged.taskQueue !== undefined ? { taskQueue: merged.taskQueue } : {}),
    ...(Object.keys(retry).length > 0 ? { retry } : {}),
  };
}
