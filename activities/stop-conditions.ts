import type { StepResult, StopCondition, ToolSet } from 'ai';

/**
 * Whether any of the agent's stop conditions (`stopWhen`: one or a list) is met by the run's
 * steps so far, evaluated as the AI SDK does (all at once, awaited; any `true` stops). The SDK's
 * own conditions (`isStepCount`, `hasToolCall`, `isLoopFinished`) and your own work alike, as long
 * as they are functions of the steps: a condition runs again when the model step is retried, so
 * one with side effects would apply them again.
 */
export async function stopConditionMet(
  stopWhen: StopCondition<ToolSet> | ReadonlyArray<StopCondition<ToolSet>> | undefined,
  steps: Array<StepResult<ToolSet>>,
): Promise<boolean> {
  if (stopWhen === undefined) return false;
  const conditions: ReadonlyArray<StopCondition<ToolSet>> = Array.isArray(stopWhen)
    ? (stopWhen as ReadonlyArray<StopCondition<ToolSet>>)
    : [stopWhen as StopCondition<ToolSet>];
  // A condition may answer at once or with a promise (the SDK's type says both).
  const met = await Promise.all(conditions.map(async (condition) => await condition({ steps })));
  return met.some(Boolean);
}
