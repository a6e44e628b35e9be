import { ACTIVITY_NAMES } from '../common/activity-names.js';
import type { ChamviActivities } from '../common/index.js';
import { AgentRegistry } from './agent-registry.js';
import { createVerifyApprovalActivity } from './approval-activities.js';
import { createCompensateActivity } from './compensate.js';
import { createEffectCallActivity } from './effect-call.js';
import { createEffectStoreActivities } from './effect-store-activities.js';
import { createModelStepActivity } from './model-step.js';
import { createToolCallActivity } from './tool-call.js';
import { conversationStoreOf } from './conversation-store-of.js';
import { ConversationLog } from '../src/conversation/conversation-log.js';
import type { ChamviPluginOptions } from '../worker/chamvi-plugin.js';
import { abortGraceOption } from '../src/effects/effect-settings.js';

/**
 * What {@link createChamviActivities} takes: the plugin's options for the activities, and whether
 * the worker's data converter offloads large payloads (External Storage), which the plugin knows
 * once the worker is created: then an effect result over Temporal's payload limit is not refused.
 */
export interface ChamviActivitiesOptions extends Omit<ChamviPluginOptions, 'workflowsPath' | 'externalStorage'> {
  readonly offloadsLargePayloads?: () => boolean;
}

/**
 * The activities the agent workflow schedules: `chamvi.modelStep`, `chamvi.effectCall`,
 * `chamvi.toolCall`, `chamvi.recordEffect`, `chamvi.verifyApproval` and `chamvi.compensate`. `chamviPlugin` registers
 * them on a worker.
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
    [ACTIVITY_NAMES.compensate]: createCompensateActivity(registry, options.store),
  };
}
