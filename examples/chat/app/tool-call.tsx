import type { DynamicToolUIPart, ToolUIPart } from 'ai';

/** The effect report the stream puts on an effect call's result (`providerMetadata.chamvi`). */
interface EffectReport {
  readonly outcome: string;
  readonly attempts: number;
}

/**
 * One tool call: its input, Approve / Deny while it waits for approval (the answer goes back with
 * the chat's next request, where the route checks it and signs the decision), then its outcome.
 */
export function ToolCall({
  part,
  answer,
}: {
  part: ToolUIPart | DynamicToolUIPart;
  answer: (approved: boolean) => void;
}) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
  const report =
    part.state === 'output-available' || part.state === 'output-error'
      ? (part.resultProviderMetadata?.['chamvi'] as EffectReport | undefined)
      : undefined;
  const input = (part.input ?? {}) as { issue?: number; body?: string };
  return (
    <section
      className="tool"
      data-testid={`tool-${name}`}
      data-state={part.state}
      data-outcome={report?.outcome ?? (part.state === 'output-denied' ? 'denied' : '')}
    >
      <header>
        <strong>{name}</strong> {input.issue !== undefined && `on issue #${input.issue}`} <em>{part.state}</em>
      </header>
      {input.body !== undefined && <blockquote>{input.body}</blockquote>}
      {part.state === 'approval-requested' && (
        <div className="actions">
          <button data-action="approve" onClick={() => answer(true)}>
            Approve
          </button>
          <button data-action="deny" onClick={() => answer(false)}>
            Deny
          </button>
        </div>
      )}
      {report && (
        <p className="outcome">
          {report.outcome} after {report.attempts} attempt{report.attempts === 1 ? '' : 's'}
        </p>
      )}
      {part.state === 'output-denied' && <p className="outcome">denied: nothing was posted</p>}
      {part.state === 'output-error' && <p className="outcome">failed: {part.errorText}</p>}
    </section>
  );
}
