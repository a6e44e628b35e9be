import { EffectResultNotSerializableError } from '../errors/errors.js';
import { canonicalJson } from '../json/canonical-json.js';
import type { ToolContext } from '../context/tool-context.js';
import type { EffectRecord } from '../stores/effect-store.js';
import type { EffectCall } from './effect-protocol.js';
import { describeError } from './store-failure.js';

// What an effect call produces and what the store gives back: the value of execute (the last one
// of a stream), the check that it can be recorded, and the mark recorded in place of a result that
// could not be.

/**
 * Calls `execute` with the call's options and `context` as its context; the result is its value,
 * or the last value a streaming `execute` yields.
 */
export function runExecute(
  call: EffectCall,
  context: ToolContext,
  onChunk: ((chunk: unknown) => void) | undefined,
): unknown {
  // The context alreadyApplied saw, even when the AI SDK handed over a copy it validated against the
  // tool's contextSchema (a zod object strips `run` and the legacy-field guards). Messages the activity
  // builds from the store only when a tool reads them stay a getter: their options are copied as
  // they are, not their values.
  const lazy = typeof Object.getOwnPropertyDescriptor(call.options, 'messages')?.get === 'function';
  const options: EffectCall['options'] = lazy
    ? (Object.create(Object.getPrototypeOf(call.options) as object | null, {
        ...Object.getOwnPropertyDescriptors(call.options),
        context: { value: context, enumerable: true, writable: true, configurable: true },
      }) as EffectCall['options'])
    : { ...call.options, context };
  const produced = call.tool.execute(call.input, options);
  return isAsyncIterable<unknown>(produced) ? lastValue(produced, onChunk) : produced;
}

async function lastValue(
  produced: AsyncIterable<unknown>,
  onChunk: ((chunk: unknown) => void) | undefined,
): Promise<unknown> {
  let last: unknown;
  for await (const chunk of produced) {
    last = chunk;
    onChunk?.(chunk);
  }
  return last;
}

/**
 * A recorded result, or the recorded "applied, result not serialisable" error thrown again. The
 * mark is the record's own `unserializable` field, never a shape of the result: whatever an
 * `execute` returned, `{ $chamviUnserializableResult: 'x' }` included, comes back as is.
 */
export function recordedResult(record: EffectRecord, call: EffectCall, key: string): unknown {
  if (record.unserializable !== undefined) {
    throw new EffectResultNotSerializableError({ toolName: call.toolName, key, reason: record.unserializable });
  }
  return record.result;
}

/** Why `result` cannot become JSON (a BigInt, a cycle), or `undefined` when it can. */
export function unserializableReason(result: unknown): string | undefined {
  try {
    JSON.stringify(result);
    return undefined;
  } catch (error) {
    try {
      canonicalJson(result, { faithful: false });
    } catch (detailed) {
      return describeError(detailed).replace(/^canonicalJson: /, '');
    }
    return describeError(error);
  }
}

export function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncIterable<T>)[Symbol.asyncIterator] === 'function'
  );
}
