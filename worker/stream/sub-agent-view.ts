import type { Client } from '@temporalio/client';
import type { UIMessage, UIMessageChunk } from 'ai';
import type { ChildRunReport } from '../../common/child-run-report.js';
import type { RunStreamStore } from '../../src/stream/run-stream-store.js';
import { linkedSignal } from '../../src/stream/wait.js';
import type { SubAgentPending } from '../../client/sub-agent-approvals.js';
import type { OpenCalls } from './open-calls.js';
import { approvalIdOf } from './run-progress-parts.js';
import { followSubAgentText } from './sub-agent-text.js';
import { canonicalJson } from '../../src/json/canonical-json.js';

/**
 * What a page gets in `part.approval.descriptor` for a call that waits in a sub-agent run: the
 * call itself (the tool part that shows the request is the top run's agent tool call, whose
 * sub-agent tree holds it). The page's copy of `input` is checked against the run's when the
 * answer comes back (`chatRoute`); nothing else in it is trusted.
 * @beta @experimental
 */
export interface SubAgentApprovalDescriptor {
  /** The sub-agent run the call waits in. */
  readonly subAgent: { readonly agent: string; readonly workflowId: string; readonly runId: string };
  /** The call's id in that run. */
  readonly toolCallId: string;
  /** The sub-agent's tool. */
  readonly toolName: string;
  /** The call's input. */
  readonly input: unknown;
}

/**
 * The sub-agent runs of the step on the page, shown in the top run's agent tool parts as the AI
 * SDK shows subagents: each running sub-agent's text as the part's preliminary output (its
 * `UIMessage` so far, see {@link followSubAgentText}); a call waiting in its tree (two levels
 * down too) as a `tool-approval-request` on the part, approval id `<sub-agent workflow id>:<call
 * id>`, with a {@link SubAgentApprovalDescriptor}. Only open parts (no output yet) are touched:
 * the part's own output, once sent, is the last word.
 */
export class SubAgentView {
  private readonly followers = new Map<string, ReturnType<typeof linkedSignal>>();
  /** When a part's follower last failed (ms since the epoch): it is started again after `retryMs`. */
  private readonly failed = new Map<string, number>();
  /** Approval requests of sub-agent calls by approval id, in the order they began waiting, and the part that shows each. */
  private readonly requests = new Map<string, { part: string; chunk: UIMessageChunk; sent: boolean }>();

  /**
   * @param replaced told when a request is sent on a part (its own approval request, if any, must go again before its response).
   * @param retryMs how long after a follower failed another is started for its part.
   */
  constructor(
    private readonly client: Client,
    private readonly stream: RunStreamStore,
    private readonly calls: OpenCalls,
    private readonly stop: AbortSignal,
    private readonly emit: (chunk: UIMessageChunk) => void,
    private readonly replaced: (part: string) => void,
    private readonly retryMs: number,
  ) {}

  /** Follows the running sub-agents whose call is open on the page; stops following the others. */
  children(children: readonly ChildRunReport[]): void {
    const wanted = new Map(
      children.filter((c) => c.status === 'running' && this.calls.isOpen(c.toolCallId)).map((c) => [c.toolCallId, c]),
    );
    for (const [part, follower] of this.followers) {
      if (wanted.has(part) || this.calls.isOpen(part)) continue;
      follower.abort();
      this.followers.delete(part);
    }
    for (const [part, child] of wanted) {
      if (this.followers.has(part) || Date.now() - (this.failed.get(part) ?? 0) < this.retryMs) continue;
      const follower = linkedSignal([this.stop]);
      this.followers.set(part, follower);
      // Preliminary output is for show: a follower that fails is dropped, and another starts after
      // retryMs (the whole message again); the part's output comes from the run either way.
      followSubAgentText(this.client, this.stream, child, follower.signal, (message) => this.show(part, message))
        .catch(() => this.failed.set(part, Date.now()))
        .finally(() => {
          if (this.followers.get(part) === follower) this.followers.delete(part);
          follower.abort();
        });
    }
  }

  /**
   * The sub-agent calls waiting now (the last poll's answer). A part shows one request at a time
   * (it has one `approval`): the one that began waiting first; when it is decided, the next.
   */
  pending(entries: readonly SubAgentPending[]): void {
    const now = new Set<string>();
    for (const { pending, via } of entries) {
      const approvalId = approvalIdOf(pending.workflowId, pending.toolCallId);
      now.add(approvalId);
      if (this.requests.has(approvalId)) continue;
      const approvalDescriptor: SubAgentApprovalDescriptor = {
        subAgent: { agent: pending.agent, workflowId: pending.workflowId, runId: pending.runId },
        toolCallId: pending.toolCallId,
        toolName: pending.toolName,
        input: pending.input,
      };
      const chunk: UIMessageChunk = {
        type: 'tool-approval-request',
        approvalId,
        toolCallId: via.toolCallId,
        reason: `Sub-agent ${pending.agent} asks to run ${pending.toolName}.`,
        approvalDescriptor,
      };
      this.requests.set(approvalId, { part: via.toolCallId, chunk, sent: false });
    }
    for (const approvalId of [...this.requests.keys()]) if (!now.has(approvalId)) this.requests.delete(approvalId);
    this.flush();
  }

  /** Sends each open part's current request, once. */
  flush(): void {
    for (const request of this.current()) {
      if (request.sent) continue;
      request.sent = true;
      this.send(request);
    }
  }

  /**
   * The open parts waiting for a sub-agent call's decision: each part that shows one, and the
   * other open calls of the same agent tool with the same input (they share its sub-agent run).
   */
  waitingParts(): string[] {
    const parts = this.current().map((r) => r.part);
    const shared = this.calls.ids().filter((id) => parts.some((part) => sameCall(this.calls, id, part)));
    return [...new Set([...parts, ...shared])];
  }

  /** Whether every open part's current request was sent. */
  allRequested(): boolean {
    return this.current().every((r) => r.sent);
  }

  /** The first waiting request of each open part. */
  private current(): Array<{ part: string; chunk: UIMessageChunk; sent: boolean }> {
    const byPart = new Map<string, { part: string; chunk: UIMessageChunk; sent: boolean }>();
    for (const request of this.requests.values())
      if (this.calls.isOpen(request.part) && !byPart.has(request.part)) byPart.set(request.part, request);
    return [...byPart.values()];
  }

  /** Sends `request` on its part and on the open calls sharing its sub-agent run (one answer, by approval id, answers all). */
  private send(request: { part: string; chunk: UIMessageChunk }): void {
    for (const part of this.calls.ids()) {
      if (part !== request.part && !sameCall(this.calls, part, request.part)) continue;
      this.replaced(part);
      this.emit({ ...request.chunk, toolCallId: part } as UIMessageChunk);
    }
  }

  private show(part: string, message: UIMessage): void {
    if (!this.calls.isOpen(part)) return;
    this.emit({ type: 'tool-output-available', toolCallId: part, output: message, preliminary: true });
    // An output moves the part out of `approval-requested`: a call still waiting is asked again.
    for (const request of this.current()) if (request.sent && request.part === part) this.send(request);
  }
}

/** Whether open calls `a` and `b` are calls of one tool with one input (one sub-agent run serves both). */
function sameCall(calls: OpenCalls, a: string, b: string): boolean {
  const x = calls.call(a);
  const y = calls.call(b);
  return (
    x !== undefined && y !== undefined && x.toolName === y.toolName && canonicalJson(x.input) === canonicalJson(y.input)
  );
}
