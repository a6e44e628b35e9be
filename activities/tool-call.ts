import { isAsyncIterable } from '../src/effects/effect-result.js';
import { UnknownToolError } from '../src/errors/errors.js';
import type { ToolCallInput, ToolCallResult } from '../common/index.js';
import { keepHeartbeating } from './activity-context.js';
import type { AgentRegistry } from './agent-registry.js';
import { withFailureMapping } from './failures.js';
import { toModelOutput } from './model-output.js';

/**
 * The tool-call activity: one call of a plain (non-effect) tool. Retried by Temporal like any
 * activity, so plain tools must be safe to run more than once (reads, computations). A streaming
 * `execute` is consumed; its last value is the result. The input is parsed by the tool's schema on
 * this worker first (`parseToolInput`): one it refuses never reaches `execute`.
 */
export function createToolCallActivity(registry: AgentRegistry) {
  return async function toolCall(input: ToolCallInput): Promise<ToolCallResult> {
    return withFailureMapping(async () => {
      const { tool, options, input: parsed } = await registry.resolveCall(input);
      if (typeof tool.execute !== 'function')
        throw new UnknownToolError({ toolName: input.toolName, agentName: input.agent, known: [] });
      const stop = keepHeartbeating();
      try {
        const produced: unknown = tool.execute(parsed, options);
        let result: unknown;
        if (isAsyncIterable(produced)) for await (const chunk of produced) result = chunk;
        else result = await produced;
        return { output: await toModelOutput(tool, input.toolCallId, parsed, result) };
      } finally {
        stop();
      }
    });
  };
}
