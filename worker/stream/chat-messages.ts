import type { Client } from '@temporalio/client';
import { readUIMessageStream, type ModelMessage, type UIMessage, type UIMessageChunk } from 'ai';
import type { ApprovalRecord, RunEffectReport } from '../../common/index.js';
import type { ConversationStore } from '../../src/stores/conversation-store.js';
import { toolOutputChunks } from '../../src/stream/tool-output-chunks.js';
import type { AgentRunOutput } from '../../workflows/agent-loop.js';
import { agentConversation } from '../../client/agent-conversation.js';
import { chatTurnWorkflowId, latestChatTurn } from './chat-turns.js';
import { effectMetadata } from './effect-metadata.js';
import { approvalIdOf } from './run-progress-parts.js';

/** A completed turn's record: what its calls' parts show beside the conversation. */
interface TurnRecord {
  readonly workflowId: string;
  readonly runId: string;
  readonly effects: readonly RunEffectReport[];
  readonly approvals: readonly ApprovalRecord[];
}

/**
 * `ChatRoute.messages`: the UI messages of chat `chatId` to open a page with. Each completed turn
 * costs one `result` call; the conversation is read once, the latest turn's, from `conversations`.
 */
export async function chatMessages(
  client: Client,
  conversations: ConversationStore,
  chatId: string,
): Promise<UIMessage[]> {
  const latest = await latestChatTurn(client, chatId);
  const live = latest.status === 'RUNNING' || latest.status === 'PAUSED';
  const done = latest.status === 'COMPLETED' ? latest.turn : latest.turn - 1;
  const records = await Promise.all(
    Array.from({ length: Math.max(0, done) }, async (_, i): Promise<TurnRecord> => {
      const workflowId = chatTurnWorkflowId(chatId, i + 1);
      const output = (await client.workflow.getHandle(workflowId).result()) as AgentRunOutput;
      return { workflowId, runId: output.runId, effects: output.effects, approvals: output.approvals ?? [] };
    }),
  );
  const conversation = async (turn: number): Promise<ModelMessage[]> =>
    turn < 1 ? [] : (await agentConversation(client, chatTurnWorkflowId(chatId, turn), conversations)).messages;
  // A live turn's conversation begins with the chat's; before its first model step it can only
  // be asked of a worker (its progress query): without one, the completed turns are shown.
  const messages = live ? await conversation(latest.turn).catch(() => conversation(done)) : await conversation(done);
  const out: UIMessage[] = [];
  let turn = 0;
  let assistant: ModelMessage[] = [];
  const flush = async () => {
    const record = records[turn - 1];
    if (record !== undefined && assistant.length > 0) out.push(await assistantMessage(record, assistant));
    assistant = [];
  };
  for (const message of messages) {
    if (message.role === 'system') continue;
    if (message.role !== 'user') {
      assistant.push(message);
      continue;
    }
    await flush();
    turn += 1;
    // The live turn's user message closes the list: its reply comes from its stream.
    out.push({ id: `${chatTurnWorkflowId(chatId, turn)}:user`, role: 'user', parts: userParts(message) });
    if (live && turn === latest.turn) return out;
  }
  await flush();
  return out;
}

function userParts(message: Extract<ModelMessage, { role: 'user' }>): UIMessage['parts'] {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return message.content.flatMap((part): UIMessage['parts'] => {
    if (part.type === 'text') return [{ type: 'text', text: part.text }];
    const data = part.type === 'image' ? part.image : part.data;
    const mediaType = part.mediaType ?? 'application/octet-stream';
    const url =
      data instanceof URL
        ? data.href
        : typeof data === 'string'
          ? /^(https?|data):/.test(data)
            ? data
            : `data:${mediaType};base64,${data}`
          : undefined;
    if (url === undefined) return [];
    const filename = part.type === 'file' ? part.filename : undefined;
    return [{ type: 'file', url, mediaType, ...(filename !== undefined ? { filename } : {}) }];
  });
}

/** One turn's assistant and tool messages as one UI message, built by the AI SDK's own reader. */
async function assistantMessage(record: TurnRecord, messages: readonly ModelMessage[]): Promise<UIMessage> {
  const chunks: UIMessageChunk[] = [{ type: 'start', messageId: `chamvi-${record.runId}` }];
  const approvals = new Map(record.approvals.map((a) => [a.toolCallId, a]));
  const effects = new Map(record.effects.flatMap((e) => (e.toolCallId === undefined ? [] : [[e.toolCallId, e]])));
  let step = 0;
  for (const message of messages) {
    if (message.role === 'assistant') {
      if (step > 0) chunks.push({ type: 'finish-step' });
      chunks.push({ type: 'start-step' });
      step += 1;
      const parts =
        typeof message.content === 'string' ? [{ type: 'text', text: message.content } as const] : message.content;
      parts.forEach((part, i) => {
        const id = `${step}.${i}`;
        if (part.type === 'text')
          chunks.push(
            { type: 'text-start', id },
            { type: 'text-delta', id, delta: part.text },
            { type: 'text-end', id },
          );
        else if (part.type === 'reasoning')
          chunks.push(
            { type: 'reasoning-start', id },
            { type: 'reasoning-delta', id, delta: part.text },
            { type: 'reasoning-end', id },
          );
        else if (part.type === 'tool-call')
          chunks.push({
            type: 'tool-input-available',
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
          });
      });
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        const approval = approvals.get(part.toolCallId);
        if (approval !== undefined) {
          const approvalId = approvalIdOf(record.workflowId, part.toolCallId);
          chunks.push(
            {
              type: 'tool-approval-request',
              approvalId,
              toolCallId: part.toolCallId,
              ...(approval.decidedBy === 'policy' ? { isAutomatic: true } : {}),
            },
            {
              type: 'tool-approval-response',
              approvalId,
              approved: approval.approved,
              ...(approval.reason !== undefined ? { reason: approval.reason } : {}),
            },
          );
        }
        const report = effects.get(part.toolCallId);
        for (const chunk of toolOutputChunks({ ...part, type: 'tool-result' })) {
          const withReport =
            report !== undefined && (chunk.type === 'tool-output-available' || chunk.type === 'tool-output-error')
              ? { ...chunk, providerMetadata: effectMetadata(report) }
              : chunk;
          chunks.push(withReport);
        }
      }
    }
  }
  if (step > 0) chunks.push({ type: 'finish-step' });
  chunks.push({ type: 'finish' });
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) last = message;
  return last ?? { id: `chamvi-${record.runId}`, role: 'assistant', parts: [] };
}
