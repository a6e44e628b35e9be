import { isEffectTool } from '../src/effects/define-effect-tool.js';
import { applyCompensation } from '../src/effects/compensation.js';
import { InvalidEffectToolError } from '../src/errors/errors.js';
import type { IEffectStore } from '../src/stores/effect-store.js';
import type { CompensateInput, CompensateResult } from '../common/index.js';
import { activityToolContext, attemptClaim, keepHeartbeating } from './activity-context.js';
import type { AgentRegistry } from './agent-registry.js';
import { withFailureMapping } from './failures.js';
import { parseToolInput } from './tool-input.js';

/**
 * The compensation activity: undoes one applied effect through the effect protocol under
 * `<key>:compensate` (see `applyCompensation`), so a worker that dies after the undo and before its
 * record is retried into `alreadyCompensated` or the record, never into a second undo the remote
 * can see. The original call's record is read from the store and checked against the tool, the
 * input and the run the workflow names; the tool's `compensate` gets the recorded result.
 *
 * A tool without `compensate` answers `no-compensation` and touches nothing. The agent's `allow`
 * and approval rules are not asked again: they governed applying the effect, and its undo is what
 * the run's policy (or `rollbackRun`) decided.
 */
export function createCompensateActivity(registry: AgentRegistry, store: IEffectStore) {
  return async function compensate(input: CompensateInput): Promise<CompensateResult> {
    return withFailureMapping(async () => {
      const registration = registry.get(input.agent);
      const found: unknown = registry.tool(registration, input.toolName);
      if (!isEffectTool(found)) {
        throw new InvalidEffectToolError(
          `Tool "${input.toolName}" of agent "${input.agent}" is not an effect tool on this worker; only effect tools are compensated, and workers of one task queue must register the same agents.`,
        );
      }
      const tool = found;
      if (tool.compensate === undefined) return { status: 'no-compensation' };
      const parsed = await parseToolInput(tool, input.toolName, input.input, true);
      const stop = keepHeartbeating();
      try {
        const resolved = await applyCompensation(
          {
            tool,
            toolName: input.toolName,
            input: parsed,
            ctx: activityToolContext(input),
            key: input.key,
            toolCallId: input.toolCallId,
          },
          {
            store,
            ...attemptClaim(),
          },
        );
        // The undo happened: a record that could not be written goes back to the workflow, which
        // writes it through the effect-store activity (failing here would retry into a second undo).
        return {
          status: 'compensated',
          outcome: resolved.report.outcome,
          attempts: resolved.report.attempts,
          ...(resolved.unrecorded !== undefined ? { unrecorded: resolved.unrecorded } : {}),
        };
      } finally {
        stop();
      }
    });
  };
}
