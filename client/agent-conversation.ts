import type { Client } from '@temporalio/client';
import type { ModelMessage } from 'ai';
import type { ConversationRef } from '../common/conversation-ref.js';
import { loadConversation, type ConversationSource } from '../src/conversation/load-conversation.js';
import type { ConversationStore } from '../src/stores/conversation-store.js';
import type { AgentRunOutput } from '../workflows/agent-loop.js';
import { agentProgressQuery } from '../common/agent-progress.js';

/** What {@link agentConversation} answers. @public */
export interface AgentConversation {
  /** The workflow id it was asked for. */
  readonly workflowId: string;
  /** The run id the conversation belongs to (`ctx.run.runId`, the prefix of its effect keys). */
  readonly runId: string;
  /** Temporal's status of the workflow's latest run: `RUNNING`, `COMPLETED`, `FAILED`, ... */
  readonly status: string;
  /** Where it was read from: the run's output, its progress query, or its history (no worker answered). */
  readonly from: 'output' | 'progress' | 'history';
  /** The messages, oldest first, as the AI SDK's `ModelMessage`s (see `loadConversation`). */
  readonly messages: ModelMessage[];
}

/**
 * The conversation of an agent run, from the store the workers keep it in: the run's output when
 * it completed, else its progress query (a worker must be polling), else its event history (the
 * last model step's reference; then the tool results that step's calls answered are not included).
 * Workflows continued as new are followed to their latest run.
 *
 * ```ts
 * const { messages } = await agentConversation(client, workflowId, store);
 * ```
 *
 * @throws ConversationEntryMissingError when the store lacks the run's entries (another store, or pruned).
 * @throws ConversationEntryCorruptError when a stored entry is not what the run wrote (every entry is checked).
 * @public
 */
export async function agentConversation(
  client: Client,
  workflowId: string,
  store: ConversationStore,
): Promise<AgentConversation> {
  const handle = client.workflow.getHandle(workflowId);
  const status = (await handle.describe()).status.name;
  let source: ConversationSource | undefined;
  let from: AgentConversation['from'] = 'output';
  if (status === 'COMPLETED') {
    source = (await handle.result()) as AgentRunOutput;
  } else {
    from = 'progress';
    source = await handle.query(agentProgressQuery).catch(() => undefined);
    if (source === undefined) {
      from = 'history';
      source = await fromHistory(client, workflowId);
    }
  }
  const messages = await loadConversation(store, source);
  return { workflowId, runId: source.runId, status, from, messages };
}

/** The last model step's reference and the run id, read from the latest run's history (JSON payloads). */
async function fromHistory(client: Client, workflowId: string): Promise<ConversationSource> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const json = (payload: { data?: Uint8Array | null } | undefined | null): unknown =>
    payload?.data == null ? undefined : (JSON.parse(Buffer.from(payload.data).toString('utf8')) as unknown);
  const modelSteps = new Map<string, { runId?: string; conversation?: ConversationRef }>();
  let runId: string | undefined;
  let conversation: ConversationRef | undefined;
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'chamvi.modelStep') {
      const input = json(scheduled.input?.payloads?.[0]) as { runId?: string; conversation?: ConversationRef };
      modelSteps.set(String(event.eventId), input);
      runId ??= input.runId;
      conversation ??= input.conversation;
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed !== null && completed !== undefined && modelSteps.has(String(completed.scheduledEventId))) {
      const result = json(completed.result?.payloads?.[0]) as { conversation?: { head: string; pending?: unknown } };
      if (result.conversation !== undefined) {
        const pending = result.conversation.pending === undefined ? [] : [result.conversation.pending];
        conversation = { head: result.conversation.head, pending: pending as ConversationRef['pending'] };
      }
    }
  }
  if (runId === undefined) throw new Error(`Workflow ${workflowId} has run no model step yet: it has no conversation.`);
  return { runId, conversation: conversation ?? { pending: [] } };
}
