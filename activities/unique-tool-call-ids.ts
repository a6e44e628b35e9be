import { DuplicateToolCallIdError } from '../src/errors/errors.js';

/**
 * Refuses a model step whose tool calls share an id (valid and invalid calls alike: the AI SDK
 * answers an invalid call with a tool result under its id too). Called before any call is planned
 * or the step's answer stored, so nothing of the step runs.
 *
 * @param where the step, for the message (`Model step 2 of run … (agent …)`).
 * @throws DuplicateToolCallIdError for the first id used twice.
 */
export function assertUniqueToolCallIds(
  calls: ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string }>,
  where: string,
): void {
  const byId = new Map<string, string[]>();
  for (const { toolCallId, toolName } of calls) {
    const names = byId.get(toolCallId);
    if (names === undefined) byId.set(toolCallId, [toolName]);
    else names.push(toolName);
  }
  for (const [toolCallId, toolNames] of byId) {
    if (toolNames.length > 1) throw new DuplicateToolCallIdError({ toolCallId, toolNames, where });
  }
}
