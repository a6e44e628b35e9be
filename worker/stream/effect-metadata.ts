import type { ProviderMetadata, UIMessageChunk } from 'ai';
import type { RunEffectReport } from '../../common/index.js';

/**
 * The provider metadata a tool part's result carries for an effect call: `{ chamvi: <the effect
 * report> }` (outcome, attempts, key, ...). `useChat` keeps it as the part's
 * `resultProviderMetadata`; `convertToModelMessages` passes it on as the tool result's
 * `providerOptions.chamvi`, which no provider reads.
 */
export function effectMetadata(report: RunEffectReport): ProviderMetadata {
  return { chamvi: JSON.parse(JSON.stringify(report)) as ProviderMetadata[string] };
}

type OutputChunk = Extract<UIMessageChunk, { type: 'tool-output-available' | 'tool-output-error' }>;

/**
 * Puts each effect call's report on its tool output chunk (`providerMetadata`, see
 * {@link effectMetadata}), whichever comes first: an output sent before its report is sent again
 * with it once the report arrives (`data-chamvi-effect`), and again when the report changes. AI
 * SDK's reader updates the tool part in place.
 */
export function withEffectMetadata(emit: (chunk: UIMessageChunk) => void): (chunk: UIMessageChunk) => void {
  const reports = new Map<string, RunEffectReport>();
  const outputs = new Map<string, OutputChunk>();
  const withReport = (chunk: OutputChunk): OutputChunk => {
    const report = reports.get(chunk.toolCallId);
    return report === undefined ? chunk : { ...chunk, providerMetadata: effectMetadata(report) };
  };
  return (chunk) => {
    if (chunk.type === 'tool-output-available' || chunk.type === 'tool-output-error') {
      outputs.set(chunk.toolCallId, chunk);
      return emit(withReport(chunk));
    }
    emit(chunk);
    if (chunk.type !== 'data-chamvi-effect') return;
    const report = chunk.data as RunEffectReport;
    if (report.toolCallId === undefined) return;
    reports.set(report.toolCallId, report);
    const output = outputs.get(report.toolCallId);
    if (output !== undefined) emit(withReport(output));
  };
}
