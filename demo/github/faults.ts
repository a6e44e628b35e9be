/** The operations of the local GitHub server that faults can target. */
export type GitHubOperation =
  | 'createIssue'
  | 'getIssue'
  | 'listIssues'
  | 'listComments'
  | 'createComment'
  | 'deleteComment'
  | 'addLabels'
  | 'listLabels'
  | 'removeLabel';

/** What a planned fault does to the next request of an operation. */
export type Fault =
  /** Apply the operation, then destroy the socket before answering: "effect applied, response lost". */
  | { readonly kind: 'drop-response' }
  /** Answer with this status and do NOT apply the operation (a 5xx outage, a 403 rate limit, ...). */
  | { readonly kind: 'fail'; readonly status: number };

/**
 * Faults planned for upcoming requests, one queue per operation; each request of the operation
 * takes the first planned fault, if any. Used through the server's `failNextCommentResponse()`,
 * `dropNextResponse()` and `failNextRequest()`.
 */
export class FaultPlan {
  private readonly queues = new Map<GitHubOperation, Fault[]>();

  /** Plans `fault` for the next `times` requests of `op`. */
  plan(op: GitHubOperation, fault: Fault, times = 1): void {
    const queue = this.queues.get(op) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.queues.set(op, queue);
  }

  /** Takes the fault for this request of `op`, if one is planned. */
  take(op: GitHubOperation): Fault | undefined {
    return this.queues.get(op)?.shift();
  }

  /** Forgets every planned fault. */
  clear(): void {
    this.queues.clear();
  }
}
