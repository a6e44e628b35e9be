// The approval messages of the agent workflow, defined without @temporalio/workflow: the same
// plain objects its defineUpdate/defineSignal/defineQuery return, so that the workflow's handlers
// and the clients (which must not load the workflow package) share one definition.
import type { QueryDefinition, SignalDefinition, UpdateDefinition } from '@temporalio/common';
import type { ApprovalDecision, ApprovalRecord, PendingApproval } from './approval-types.js';

/** Update `chamvi.decideApproval`: approve or deny a pending call; answers the record, or fails with why it was refused. */
export const decideApprovalUpdate = { type: 'update', name: 'chamvi.decideApproval' } as UpdateDefinition<
  ApprovalRecord,
  [ApprovalDecision],
  'chamvi.decideApproval'
>;

/** Signal `chamvi.approvalDecision`: the same decision, fire-and-forget (a refused one is logged and dropped). */
export const approvalDecisionSignal = { type: 'signal', name: 'chamvi.approvalDecision' } as SignalDefinition<
  [ApprovalDecision],
  'chamvi.approvalDecision'
>;

/** Query `chamvi.pendingApprovals`: the calls of the run waiting for a decision. */
export const pendingApprovalsQuery = { type: 'query', name: 'chamvi.pendingApprovals' } as QueryDefinition<
  PendingApproval[],
  [],
  'chamvi.pendingApprovals'
>;
