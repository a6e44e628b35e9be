import { Context } from '@temporalio/activity';
import type { StepUsage } from '../common/run-usage.js';

/**
 * The metrics the model-step activity records through Temporal's metric meter, tagged like
 * Temporal's own activity metrics (namespace, task queue, activity type) plus the labels below.
 * @beta
 */
export const MODEL_METRICS = {
  /** Counter, labels `agent`, `model`, `kind` (`input`, `output`): the tokens of each model step that answered. */
  tokens: 'chamvi_model_tokens',
} as const;

interface AnsweredStep {
  readonly usage: { readonly inputTokens: number | undefined; readonly outputTokens: number | undefined };
  readonly response: { readonly modelId?: string };
}

/**
 * What a model step used, as the provider reported it (tokens it does not report count 0), and
 * the model that answered: the response's model id, else the model's own (a price table is keyed
 * by it). Counts the tokens in {@link MODEL_METRICS}.
 */
export function stepUsage(agent: string, result: AnsweredStep, model: unknown): StepUsage {
  const own = typeof model === 'string' ? model : (model as { modelId?: unknown } | undefined)?.modelId;
  const answered = result.response.modelId;
  const modelId =
    typeof answered === 'string' && answered !== '' ? answered : typeof own === 'string' ? own : 'unknown';
  const usage = {
    inputTokens: tokens(result.usage.inputTokens),
    outputTokens: tokens(result.usage.outputTokens),
    modelId,
  };
  const counter = Context.current().metricMeter.createCounter(
    MODEL_METRICS.tokens,
    '1',
    'Tokens of the model steps that answered, by agent, model and kind (input, output).',
  );
  counter.add(usage.inputTokens, { agent, model: modelId, kind: 'input' });
  counter.add(usage.outputTokens, { agent, model: modelId, kind: 'output' });
  return usage;
}

/** A provider's token count as a count: a missing, negative or fractional one is not trusted as it is. */
function tokens(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}
