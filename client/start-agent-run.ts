import type { Client, WorkflowHandleWithFirstExecutionRunId, WorkflowStartOptions } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import type { AgentWorkflowInput } from '../workflows/agent-workflow.js';
import type { AgentRunOutput } from '../workflows/agent-loop.js';

/**
 * The Keyword search attribute `agentSearchAttribute: true` sets to the agent's name, so runs can
 * be listed and filtered by agent (`ChamviAgent = "responder"` in the UI or `temporal workflow list
 * --query`). Register it once per namespace: `temporal operator search-attribute create --name
 * ChamviAgent --type Keyword` (the dev server: `temporal server start-dev --search-attribute
 * ChamviAgent=Keyword`).
 */
export const AGENT_SEARCH_ATTRIBUTE = 'ChamviAgent';

/** Temporal's start options that {@link startAgentRun} passes through as they are. @public */
export type AgentRunStartOptions = Pick<
  WorkflowStartOptions,
  | 'workflowIdReusePolicy'
  | 'workflowIdConflictPolicy'
  | 'memo'
  | 'typedSearchAttributes'
  | 'staticSummary'
  | 'staticDetails'
  | 'retry'
>;

/** What {@link startAgentRun} takes: the workflow input plus where, under which id and how to start it. @public */
export type StartAgentRunOptions = AgentWorkflowInput &
  AgentRunStartOptions & {
    readonly taskQueue: string;
    /**
     * Default: `agent-<agent name>-<random>`. Starting a workflow id again after its run closed is a
     * new run with a new run id (unless `workflowIdReusePolicy` refuses it); while it runs, the
     * start fails with `WorkflowExecutionAlreadyStartedError` unless `workflowIdConflictPolicy`
     * says `USE_EXISTING` (the running run's handle) or `TERMINATE_EXISTING`.
     */
    readonly workflowId?: string;
    /**
     * Set a Keyword search attribute to the agent's name: `true` for {@link AGENT_SEARCH_ATTRIBUTE}
     * (`ChamviAgent`), or the name of your own attribute. It must be registered in the namespace
     * first, or the start fails. Default: none.
     */
    readonly agentSearchAttribute?: boolean | string;
  };

/**
 * The handle of an agent run (`startAgentRun`): `await handle.result()` is its {@link AgentRunOutput}.
 * A retried workflow keeps its run id (`firstExecutionRunId`), so effects are not applied again.
 * @public
 */
export type AgentRunHandle = WorkflowHandleWithFirstExecutionRunId<
  (input: AgentWorkflowInput) => Promise<AgentRunOutput>
>;

/**
 * Starts the generic agent workflow for a registered agent, without writing workflow code.
 * Returns the workflow handle; `await handle.result()` gives the text, steps and effect report.
 *
 * Temporal's start options (id reuse and conflict policies, memo, search attributes, static
 * summary and details, the workflow retry policy) pass through; the static summary
 * defaults to `agent <name>`, so the UI's list says which agent a run is.
 * @public
 */
export async function startAgentRun(client: Client, options: StartAgentRunOptions): Promise<AgentRunHandle> {
  const {
    taskQueue,
    workflowId,
    agentSearchAttribute,
    workflowIdReusePolicy,
    workflowIdConflictPolicy,
    memo,
    typedSearchAttributes,
    staticSummary,
    staticDetails,
    retry,
    ...input
  } = options;
  const searchAttributes = withAgentAttribute(typedSearchAttributes, agentSearchAttribute, input.agent);
  return client.workflow.start<(input: AgentWorkflowInput) => Promise<AgentRunOutput>>('agentWorkflow', {
    taskQueue,
    workflowId: workflowId ?? `agent-${input.agent}-${crypto.randomUUID()}`,
    args: [input],
    staticSummary: staticSummary ?? `agent ${input.agent}`,
    ...(retry !== undefined ? { retry } : {}),
    ...(workflowIdReusePolicy !== undefined ? { workflowIdReusePolicy } : {}),
    ...(workflowIdConflictPolicy !== undefined ? { workflowIdConflictPolicy } : {}),
    ...(memo !== undefined ? { memo } : {}),
    ...(searchAttributes !== undefined ? { typedSearchAttributes: searchAttributes } : {}),
    ...(staticDetails !== undefined ? { staticDetails } : {}),
  });
}

/** Starts an agent run and waits for its result. */
export async function runAgentWorkflow(client: Client, options: StartAgentRunOptions): Promise<AgentRunOutput> {
  const handle = await startAgentRun(client, options);
  return handle.result();
}

function withAgentAttribute(
  given: AgentRunStartOptions['typedSearchAttributes'],
  attribute: boolean | string | undefined,
  agent: string,
): AgentRunStartOptions['typedSearchAttributes'] {
  if (attribute === undefined || attribute === false) return given;
  const name = attribute === true ? AGENT_SEARCH_ATTRIBUTE : attribute;
  const pairs = given instanceof TypedSearchAttributes ? given.getAll() : [...(given ?? [])];
  const key = defineSearchAttributeKey(name, SearchAttributeType.KEYWORD);
  return [...pairs.filter((pair) => pair.key.name !== name), { key, value: agent }];
}
