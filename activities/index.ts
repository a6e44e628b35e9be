import type { IEffectStore } from '../src/stores/effect-store.js';
import { ACTIVITY_NAMES } from '../common/activity-names.js';
import type { ChamviActivities } from '../common/index.js';
import { AgentRegistry, type AgentEntry } from './agent-registry.js';
import { createVerifyApprovalActivity } from './approval-activities.js';
import { createEffectCallActivity } from './effect-call.js';
import { createEffectStoreActivities } from './effect-store-activities.js';
import { createModelStepActivity } from './model-step.js';
import { createToolCallActivity } from './tool-call.js';
import { conversationStoreOf } from './conversation-store-of.js';
import { ConversationLog } from '../src/conversation/conversation-log.js';
import type { ConversationStore } from '../src/stores/conversation-store.js';
import type { RunStreamStore } from '../src/stream/run-stream-store.js';
import { abortGraceOption } from '../src/effects/effect-settings.js';

export { AgentRegistry, type AgentEntry, type AgentRegistration } from './agent-registry.js';
export { APPROVAL_SECRET_ENV } from './approval-activities.js';
export { EFFECT_METRICS } from './effect-telemetry.js';
export { ModelCallFailedError, ModelCallRejectedError } from './model-call-error.js';

/** What {@link createChamviActivities} takes. */
export interface ChamviActivitiesOptions {
  /** The agents this worker runs (by their names). */
  readonly agents: readonly AgentEntry[];
  /** Where effect results are recorded; shared by every worker of the task queue in production. */
  readonly store: IEffectStore;
  /**
   * How long an effect key stays claimed after its attempt was cancelled or timed out while the
   * tool's `execute` still runs, in ms. Default 120 000. Until then a retry on another worker waits
   * and finds the record; past it the claim is released with a warning, and a retry may apply the
   * effect again (an `execute` that ignores its abort signal past this bound is not protected).
   * A whole number from 0 to 2^31 - 1; anything else (`NaN`, -1, `Infinity`) is refused with
   * `InvalidOptionError` when the activities (the plugin, the worker) are created.
   */
  readonly abortGraceMs?: number;
  /**
   * The secret approval tokens are signed with: at least 16 bytes (32 random ones are best,
   * `openssl rand -base64 32`). Default: the `CHAMVI_APPROVAL_SECRET` environment variable, read
   * when the activities are created; without one, every approval decision is refused. A shorter
   * secret fails {@link createChamviActivities} (so the plugin and the worker) with
   * `InvalidApprovalSecretError`.
   */
  readonly approvalSecret?: string | Uint8Array;
  /**
   * Where the runs' conversations are kept (entries the model steps write and the tool calls read).
   * Default: `store`, which every store this library ships can do; a custom store without it
   * gets one in this process's memory (the runs then work on one worker process only).
   */
  readonly conversationStore?: ConversationStore;
  /**
   * Whether the worker's data converter offloads large payloads (External Storage); then an effect
   * result over Temporal's payload limit is not refused. The plugin sets it.
   */
  readonly offloadsLargePayloads?: () => boolean;
  /**
   * Where model steps write what they stream (text, reasoning, tool-call deltas) for readers such
   * as `runUIMessageStream`. Absent (the default): steps call the model with `generateText` and
   * stream nothing.
   */
  readonly stream?: RunStreamStore;
}

/**
 * The activities the agent workflow schedules: `chamvi.modelStep`, `chamvi.effectCall`,
 * `chamvi.toolCall`, `chamvi.recordEffect` and `chamvi.verifyApproval`. Register them on a worker
 * (the worker factory and plugin do it for you).
 */
export function createChamviActivities(options: ChamviActivitiesOptions): ChamviActivities {
  const abortGraceMs = abortGraceOption('Worker', options.abortGraceMs);
  // One log per worker: its cache spares the store reads of the runs this worker ran last.
  const conversations = new ConversationLog(conversationStoreOf(options).store);
  const registry = new AgentRegistry(options.agents, options.approvalSecret, conversations);
  const storeActivities = createEffectStoreActivities(options.store);
  return {
    [ACTIVITY_NAMES.modelStep]: createModelStepActivity(registry, conversations, options.stream),
    [ACTIVITY_NAMES.effectCall]: createEffectCallActivity(registry, options.store, {
      abortGraceMs,
      ...(options.offloadsLargePayloads !== undefined ? { offloadsLargePayloads: options.offloadsLargePayloads } : {}),
    }),
    [ACTIVITY_NAMES.toolCall]: createToolCallActivity(registry),
    [ACTIVITY_NAMES.recordEffect]: storeActivities.recordEffect,
    [ACTIVITY_NAMES.verifyApproval]: createVerifyApprovalActivity(options.approvalSecret),
  };
}
