import type { UIMessageChunk } from 'ai';
import type { RunStreamBatch } from '../../src/stream/run-stream-store.js';
import type { RunStreamUIState } from '../../src/stream/ui-chunks.js';
import type { RunProgressParts } from './run-progress-parts.js';

/**
 * The calls a stream's view knows to have needed approval, and the decisions it learns late. A
 * call decided without waiting (by the approval policy) is in no pending-approvals answer; the
 * run's progress has its record once every call of its step ended, which is before the next step
 * writes their results to the stream. So before a batch with the result of a call not known here
 * is shown, the progress query is asked (once per such call), and the call's approval request
 * goes first (`isAutomatic`, as the AI SDK marks a decision of its `toolApproval`): the part
 * passes through `approval-responded` as for a call the user decided.
 */
export class ApprovalView {
  private readonly known = new Set<string>();
  private readonly asked = new Set<string>();
  private readonly automatic = new Set<string>();

  /**
   * @param complete the decisions given to {@link request} before the stream began are all of the
   *   run's (it had completed): nothing is asked later.
   */
  constructor(
    private readonly ui: RunStreamUIState,
    private readonly complete: boolean,
  ) {}

  /**
   * A call needs (or needed) approval: the view's approval request for it, now or once it is shown.
   * `automatic`: the approval rule decided it (`decidedBy: 'policy'`), see {@link mark}.
   */
  request(toolCallId: string, automatic = false): UIMessageChunk[] {
    this.known.add(toolCallId);
    if (automatic) this.automatic.add(toolCallId);
    return this.ui.approvalRequested(toolCallId).map((chunk) => this.mark(chunk));
  }

  /** `chunk`, with `isAutomatic: true` when it is the approval request of a call the rule decided (as the AI SDK sends it). */
  mark(chunk: UIMessageChunk): UIMessageChunk {
    if (chunk.type !== 'tool-approval-request' || !this.automatic.has(chunk.toolCallId)) return chunk;
    return { ...chunk, isAutomatic: true };
  }

  /** The approval requests to send before `batches`: calls of their results decided without waiting. */
  async before(batches: readonly RunStreamBatch[], progress: RunProgressParts): Promise<UIMessageChunk[]> {
    if (this.complete) return [];
    const unknown = batches
      .flatMap((batch) => batch.parts)
      .flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : []))
      .filter((id) => !this.known.has(id) && !this.asked.has(id));
    if (unknown.length === 0) return [];
    for (const id of unknown) this.asked.add(id);
    const records = (await progress.progress())?.approvals ?? [];
    return records
      .filter((r) => !this.known.has(r.toolCallId))
      .flatMap((r) => this.request(r.toolCallId, r.decidedBy === 'policy'));
  }
}
