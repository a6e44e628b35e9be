// The client helpers `@chamvi/temporal/worker` exported before `@chamvi/temporal/client` existed,
// kept so that code importing them from here still compiles and runs. Importing them from here
// loads the worker (and its native bridge): a web server should import `@chamvi/temporal/client`.
import * as client from '../client/index.js';

/** @deprecated Import `startAgentRun` from `@chamvi/temporal/client` (this entry point loads the worker). */
export const startAgentRun = client.startAgentRun;
/** @deprecated Import `runAgentWorkflow` from `@chamvi/temporal/client` (this entry point loads the worker). */
export const runAgentWorkflow = client.runAgentWorkflow;
/** @deprecated Import `AGENT_SEARCH_ATTRIBUTE` from `@chamvi/temporal/client`. */
export const AGENT_SEARCH_ATTRIBUTE = client.AGENT_SEARCH_ATTRIBUTE;
/** @deprecated Import `StartAgentRunOptions` from `@chamvi/temporal/client`. */
export type StartAgentRunOptions = client.StartAgentRunOptions;
/** @deprecated Import `AgentRunStartOptions` from `@chamvi/temporal/client`. */
export type AgentRunStartOptions = client.AgentRunStartOptions;

/** @deprecated Import `listPendingApprovals` from `@chamvi/temporal/client` (this entry point loads the worker). */
export const listPendingApprovals = client.listPendingApprovals;
/** @deprecated Import `decideApproval` from `@chamvi/temporal/client` (this entry point loads the worker). */
export const decideApproval = client.decideApproval;
/** @deprecated Import `approvalClaimsFor` from `@chamvi/temporal/client`. */
export const approvalClaimsFor = client.approvalClaimsFor;
/** @deprecated Import `ApprovalNotPendingError` from `@chamvi/temporal/client`. */
export const ApprovalNotPendingError = client.ApprovalNotPendingError;
/** @deprecated Import `ApprovalNotPendingError` from `@chamvi/temporal/client`. */
export type ApprovalNotPendingError = client.ApprovalNotPendingError;
/** @deprecated Import `ApprovalSecretMissingError` from `@chamvi/temporal/client`. */
export const ApprovalSecretMissingError = client.ApprovalSecretMissingError;
/** @deprecated Import `ApprovalSecretMissingError` from `@chamvi/temporal/client`. */
export type ApprovalSecretMissingError = client.ApprovalSecretMissingError;
/** @deprecated Import `DecideApprovalOptions` from `@chamvi/temporal/client`. */
export type DecideApprovalOptions = client.DecideApprovalOptions;
/** @deprecated Import `decideApprovalUpdate` from `@chamvi/temporal/client` (or `/workflows` in workflow code). */
export const decideApprovalUpdate = client.decideApprovalUpdate;
/** @deprecated Import `approvalDecisionSignal` from `@chamvi/temporal/client` (or `/workflows` in workflow code). */
export const approvalDecisionSignal = client.approvalDecisionSignal;
/** @deprecated Import `pendingApprovalsQuery` from `@chamvi/temporal/client` (or `/workflows` in workflow code). */
export const pendingApprovalsQuery = client.pendingApprovalsQuery;

/** @deprecated Import `agentProgressQuery` from `@chamvi/temporal/client` (or `/workflows` in workflow code). */
export const agentProgressQuery = client.agentProgressQuery;
/** @deprecated Import `AgentProgress` from `@chamvi/temporal/client`. */
export type AgentProgress = client.AgentProgress;
/** @deprecated Import `agentConversation` from `@chamvi/temporal/client` (this entry point loads the worker). */
export const agentConversation = client.agentConversation;
/** @deprecated Import `AgentConversation` from `@chamvi/temporal/client`. */
export type AgentConversation = client.AgentConversation;
/** @deprecated Import `loadConversation` from `@chamvi/temporal/client` (this entry point loads the worker). */
export const loadConversation = client.loadConversation;
/** @deprecated Import `ConversationSource` from `@chamvi/temporal/client`. */
export type ConversationSource = client.ConversationSource;
