import type { Client } from '@temporalio/client';
import type { UIMessageChunk } from 'ai';
import type { PendingApproval, RunEffectReport } from '../../common/index.js';
import { pendingApprovalsQuery } from '../../common/approval-handlers.js';
import { agentProgressQuery, type AgentProgress } from '../../common/agent-progress.js';
import type { ChildRunReport } from '../../common/child-run-report.js';
import { linkedSignal } from '../../src/stream/wait.js';
import { subAgentApprovals, type SubAgentPending } from '../../client/sub-agent-approvals.js';

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

/**
 * The data part of an approval: `data-chamvi-approval`, pending while the run waits, then
 * `decided`. Its id: the tool call id for a call of the run, the approval id
 * (`<workflow id>:<tool call id>`) for one waiting in a sub-agent run (its `workflowId` set).
 * @beta @experimental
 */
export type ChamviApprovalChunk = {
  type: 'data-chamvi-approval';
  id: string;
  data: (PendingApproval & { status: 'pending' }) | { status: 'decided'; toolCallId: string; workflowId?: string };
};

/**
 * The effect outcomes and pending approvals of one run as UI data parts, each emitted again only
 * when it changed: AI SDK's reader replaces a data part with the same type and id in place, so a
 * page sees one part per call that moves from pending to its outcome.
 */
export class RunProgressParts {
  private readonly sent = new Map<string, string>();
  private readonly last = new Map<string, UIMessageChunk>();
  private readonly pending = new Map<string, PendingApproval>();
  /** The run followed, once known: answers about another run under the workflow id (it reused the id) are dropped. */
  runId: string | undefined;
  /** The run's sub-agent runs, as its last progress answer listed them. */
  children: readonly ChildRunReport[] = [];
  /** Set when a poll found a sub-agent run started or ended (the reader clears it). */
  childrenChanged = false;
  /** The calls waiting in its running sub-agent runs, as last found (kept when a poll could not ask). */
  subAgentPending: readonly SubAgentPending[] = [];

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
    if (progress !== undefined) {
      const children = progress.children ?? [];
      if (
        this.changed(
          'children',
          children.map((c) => [c.toolCallId, c.status]),
        )
      )
        this.childrenChanged = true;
      this.children = children;
      const running = this.children.some((c) => c.status === 'running');
      const sub = running ? await this.timed(() => subAgentApprovals(this.client, this.workflowId, progress)) : [];
      if (sub !== undefined) this.subAgentPending = sub;
    }
    const own = pending?.filter((p) => this.runId === undefined || p.runId === this.runId);
    const all = own === undefined ? undefined : [...own, ...this.subAgentPending.map((e) => e.pending)];
    return [...this.effects(progress?.effects ?? []), ...(all === undefined ? [] : this.approvals(all))];
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
    const idOf = (p: PendingApproval) =>
      p.workflowId === undefined ? p.toolCallId : approvalIdOf(p.workflowId, p.toolCallId);
    const now = new Set(pending.map(idOf));
    for (const request of pending) {
      const id = idOf(request);
      this.pending.set(id, request);
      const data = { ...request, status: 'pending' as const };
      const chunk: ChamviApprovalChunk = { type: 'data-chamvi-approval', id, data };
      if (this.changed(`approval:${id}`, data, chunk)) out.push(chunk);
    }
    for (const [id, request] of [...this.pending]) {
      if (now.has(id)) continue;
      this.pending.delete(id);
      const { toolCallId, workflowId } = request;
      const data = { status: 'decided' as const, toolCallId, ...(workflowId !== undefined ? { workflowId } : {}) };
      const chunk: ChamviApprovalChunk = { type: 'data-chamvi-approval', id, data };
      this.changed(`approval:${id}`, data, chunk);
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
