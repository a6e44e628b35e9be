import type { ToolContext } from '../context/tool-context.js';
import { CompensationRefusedError } from '../errors/errors.js';
import type { EffectRecord } from '../stores/effect-store.js';
import type { EffectTool } from './define-effect-tool.js';
import { inputFingerprint } from './effect-key.js';
import { storeFailure } from './store-failure.js';
import { applyEffect, type EffectEnv, type EffectResolution } from './effect-protocol.js';

/** What a compensation's key adds to the key of the effect it undoes. @beta */
export const COMPENSATION_SUFFIX = ':compensate';

/**
 * The effect key of the compensation of `key`: `<key>:compensate`. A compensation is an effect of
 * its own under this key, so its record, its claim and its fence are apart from the original's.
 * @beta
 */
export function compensationKey(key: string): string {
  return `${key}${COMPENSATION_SUFFIX}`;
}

/** One compensation: the applied effect to undo, as its tool, input and the run's context say it. */
export interface CompensationCall {
  readonly tool: EffectTool;
  readonly toolName: string;
  /** The original call's input, parsed by the tool's schema. */
  readonly input: unknown;
  readonly ctx: ToolContext;
  /** The original effect's key. */
  readonly key: string;
  /** The call id the compensation reports (the original call's). */
  readonly toolCallId: string;
}

/**
 * Undoes one applied effect, at most once: reads the original's record from the store and checks
 * it (see {@link CompensationRefusedError}), then runs the tool's `compensate` through the effect
 * protocol under {@link compensationKey}: a recorded compensation is answered from the store, a
 * claim keeps two attempts apart, `alreadyCompensated` (when given) finds an undo that an attempt
 * crashed after, and the result is recorded. `compensate` gets the original's recorded result,
 * never one handed in by the caller.
 *
 * @throws CompensationRefusedError when the record does not vouch for the call; nothing ran.
 */
export async function applyCompensation(call: CompensationCall, env: EffectEnv): Promise<EffectResolution> {
  const { tool, toolName, key, ctx } = call;
  const compensate = tool.compensate;
  const refuse = (reason: string): never => {
    throw new CompensationRefusedError({ key, toolName, reason });
  };
  if (compensate === undefined) refuse('the tool has no compensate');
  if (key.endsWith(COMPENSATION_SUFFIX)) refuse('a compensation is not compensated');
  const original = await readOriginal(env, key);
  if (original === undefined) refuse('the store holds no record of the effect (it was never applied here)');
  const record = original as EffectRecord;
  if (record.toolName !== toolName) refuse(`the record is of tool "${record.toolName}"`);
  if (record.origin !== 'executed' && record.origin !== 'reconciled')
    refuse(`the record's origin is "${String(record.origin)}"`);
  if (record.unserializable !== undefined) refuse('the effect recorded no result to undo from');
  if (record.runId !== undefined && record.runId !== ctx.run.runId)
    refuse(`the record belongs to run "${record.runId}"`);
  if (record.fingerprint !== undefined && record.fingerprint !== safeFingerprint(call.input))
    refuse('the record was made for another input');
  const undo = {
    execute: (input: unknown, options: { context: ToolContext }) =>
      (compensate as NonNullable<EffectTool['compensate']>)(record.result, input, options.context),
    ...(tool.alreadyCompensated !== undefined ? { alreadyApplied: tool.alreadyCompensated } : {}),
  } as unknown as EffectTool;
  return applyEffect(
    {
      tool: undo,
      toolName,
      input: call.input,
      ctx,
      options: { toolCallId: call.toolCallId, messages: [], context: ctx },
      key: compensationKey(key),
      step: 0,
      compensates: key,
    },
    env,
  );
}

async function readOriginal(env: EffectEnv, key: string): Promise<EffectRecord | undefined> {
  try {
    return await env.store.get(key);
  } catch (error) {
    throw storeFailure(error, key, 'read');
  }
}

function safeFingerprint(input: unknown): string | undefined {
  try {
    return inputFingerprint(input);
  } catch {
    return undefined;
  }
}
