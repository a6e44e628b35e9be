import type { Client } from '@temporalio/client';
import type { UIMessageChunk } from 'ai';
import type { PendingApproval, RunEffectReport } from '../../common/index.js';
import { pendingApprovalsQuery } from '../../common/approval-handlers.js';
import { agentProgressQuery, type AgentProgress } from '../../common/agent-progress.js';
import { linkedSignal } from '../../src/stream/wait.js';

/** How long a progress query may take before the stream goes on without it, in ms. */
const QUERY_TIMEOUT_MS = 5000;

/**
 * The approval id of a call in the UI stream (`tool-approval-request`, the tool part's
 * `approval.id`): `<workflow id>:<tool call id>`, the same for every reader and replay. It names
 * the call, it does not authorise anything: a decision is checked against the run's pending call.
 * @beta @experimental
 */
export function approvalIdOf(workflowId: string, toolCallId: string): string {
  return `${workflowId}:${toolCallId}`;
}

/** The data part of an effect call: `data-chamvi-effect`, one per call (its id: the tool call id, else the key). @beta @experimental */
export type ChamviEffectChunk = { type: 'data-chamvi-effect'; id: string; data: RunEffectReport };

/** The data part of an approval: `data-chamvi-approval`, pending while the run waits, then `decided`. @beta @experimental */
export type ChamviApprovalChunk = {
  type: 'data-chamvi-approval';
  id: string;
  data: (PendingApproval & { status: 'pending' }) | { status: 'decided'; toolCallId: string };
};

/**
 * The effect outcomes and pending approvals of one run as UI data parts, each emitted again only
 * when it changed: AI SDK's reader replaces a data part with the same type and id in place, so a
 * page sees one part per call that moves from pending to its outcome.
 */
export class RunProgressParts {
  private readonly sent = new Map<string, string>();
  private readonly last = new Map<string, UIMessageChunk>();
  private readonly pending = new Set<string>();
  /** The run followed, once known: answers about another run under the workflow id (it reused the id) are dropped. */
  runId: string | undefined;

  /** @param stop cancels the queries in flight (the stream ended). */
  constructor(
    private readonly client: Client,
    private readonly workflowId: string,
    private readonly stop: AbortSignal,
  ) {}

  /** The run's progress (`chamvi.progress`), `undefined` when no worker answered in time. */
  async progress(): Promise<AgentProgress | undefined> {
    return this.timed(() => this.client.workflow.getHandle(this.workflowId).query(agentProgressQuery));
  }

  /** Chunks for what changed since the last call, from the progress and pending-approvals queries. */
  async poll(): Promise<UIMessageChunk[]> {
    const handle = this.client.workflow.getHandle(this.workflowId);
    const [progress, pending] = await Promise.all([
      this.progress(),
      this.timed(() => handle.query(pendingApprovalsQuery)),
    ]);
    if (this.runId !== undefined && progress !== undefined && progress.runId !== this.runId) return [];
    const own = pending?.filter((p) => this.runId === undefined || p.runId === this.runId);
    return [...this.effects(progress?.effects ?? []), ...(own === undefined ? [] : this.approvals(own))];
  }

  /** Chunks for effect reports that are new or changed. */
  effects(reports: readonly RunEffectReport[]): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    for (const report of reports) {
      const id = report.toolCallId ?? report.key;
      const chunk: ChamviEffectChunk = { type: 'data-chamvi-effect', id, data: report };
      if (this.changed(`effect:${id}`, report, chunk)) out.push(chunk);
    }
    return out;
  }

  /** Chunks for approvals that began waiting, and for those no longer waiting (`decided`). */
  approvals(pending: readonly PendingApproval[]): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    const now = new Set(pending.map((p) => p.toolCallId));
    for (const request of pending) {
      this.pending.add(request.toolCallId);
      const data = { ...request, status: 'pending' as const };
      const chunk: ChamviApprovalChunk = { type: 'data-chamvi-approval', id: request.toolCallId, data };
      if (this.changed(`approval:${request.toolCallId}`, data, chunk)) out.push(chunk);
    }
    for (const toolCallId of [...this.pending]) {
      if (now.has(toolCallId)) continue;
      this.pending.delete(toolCallId);
      const data = { status: 'decided' as const, toolCallId };
      const chunk: ChamviApprovalChunk = { type: 'data-chamvi-approval', id: toolCallId, data };
      this.changed(`approval:${toolCallId}`, data, chunk);
      out.push(chunk);
    }
    return out;
  }

  /** Every data part sent so far, as last sent. */
  resend(): UIMessageChunk[] {
    return [...this.last.values()];
  }

  /**
   * `query`, cancelled after {@link QUERY_TIMEOUT_MS} or when the stream stops (a cancelled call
   * is not retried by the client, unlike one merely abandoned); `undefined` when it did not answer.
   */
  private async timed<T>(query: () => Promise<T>): Promise<T | undefined> {
    const cancel = linkedSignal([this.stop], QUERY_TIMEOUT_MS);
    try {
      // A run without a worker, or one not started yet, answers nothing: the stream goes on without.
      return await this.client.withAbortSignal(cancel.signal, query).catch(() => undefined);
    } finally {
      cancel.dispose();
    }
  }

  private changed(key: string, value: unknown, chunk?: UIMessageChunk): boolean {
    const json = JSON.stringify(value);
    if (this.sent.get(key) === json) return false;
    this.sent.set(key, json);
    if (chunk !== undefined) this.last.set(key, chunk);
    return true;
  }
}
