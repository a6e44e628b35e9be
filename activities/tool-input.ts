import { asSchema, InvalidToolInputError, isDeepEqualData, TypeValidationError, type ToolSet } from 'ai';

type Validated =
  { readonly success: true; readonly value: unknown } | { readonly success: false; readonly error: Error };

/** The AI SDK's `safeValidateTypes` (`@ai-sdk/provider-utils`), from what `ai` itself exports. */
async function safeValidate(tool: ToolSet[string], value: unknown): Promise<Validated> {
  const schema = asSchema(tool.inputSchema);
  try {
    if (schema.validate === undefined) return { success: true, value };
    const result = await schema.validate(value);
    return result.success
      ? { success: true, value: result.value }
      : { success: false, error: TypeValidationError.wrap({ value, cause: result.error }) };
  } catch (error) {
    return { success: false, error: TypeValidationError.wrap({ value, cause: error }) };
  }
}

/**
 * The input a tool call runs with, parsed by the tool's `inputSchema` as this worker defines it,
 * the way the AI SDK parses a model's tool input (its `asSchema` and the schema's own validation,
 * so defaults and transforms apply): `execute`, `alreadyApplied`, `effectKey` and the approval
 * check all get the parsed value.
 *
 * A `planned` call is one the model step planned: its input is the AI SDK's parsed value already,
 * and its effect key and approval are bound to it as it is. It runs only if the schema gives that
 * same value back (deep equality, as the AI SDK re-checks an approved call): a schema changed since
 * (a redeploy while the call waited for approval) that rejects the input or reads it differently
 * refuses the call. So does a schema whose output does not parse back to itself (a `.transform`
 * that changes the value's type); such a tool must transform in `execute` instead. An unplanned
 * call (an effect tool called from workflow code through `effectToolCalls`) is parsed from its raw
 * input and runs with the result.
 *
 * @throws the AI SDK's `InvalidToolInputError` (not retried; the model is told, as for invalid
 *   input in the model step) when the schema refuses the input or changes a planned one.
 */
export async function parseToolInput(
  tool: ToolSet[string],
  toolName: string,
  input: unknown,
  planned: boolean,
): Promise<unknown> {
  const parsed = await safeValidate(tool, input);
  const toolInput = JSON.stringify(input) ?? String(input);
  if (!parsed.success) throw new InvalidToolInputError({ toolName, toolInput, cause: parsed.error });
  if (planned && !isDeepEqualData(parsed.value, input)) {
    throw new InvalidToolInputError({
      toolName,
      toolInput,
      cause: new Error(
        "the tool's input schema on this worker turns the planned input into another value (its schema changed since the call was planned, or it transforms its own output again); the call was planned, keyed and approved with the input as it is, so it did not run. Call the tool again.",
      ),
    });
  }
  return parsed.value;
}
