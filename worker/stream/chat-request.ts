import type { Client } from '@temporalio/client';
import type { UIMessage } from 'ai';
import { DEFAULT_STREAM_READ_LIMIT, type RunStreamStore } from '../../src/stream/run-stream-store.js';
import { ChatRequestError } from './chat-errors.js';

/** Most parts a new user message may have. */
const MAX_USER_PARTS = 100;

/**
 * The page's new user message, keeping only what a user writes: text parts and file parts.
 * @throws ChatRequestError for a message without parts, or with a part of another kind (a tool
 *   result, reasoning, a data part: none of them is the user's to send).
 */
export function userMessageOf(chatId: string, message: Partial<UIMessage>): Omit<UIMessage, 'id'> {
  const parts = Array.isArray(message.parts) ? (message.parts as unknown[]) : [];
  if (parts.length === 0 || parts.length > MAX_USER_PARTS) {
    throw new ChatRequestError(
      `Chat ${chatId}: the user message must have 1 to ${MAX_USER_PARTS} parts; it has ${parts.length}.`,
    );
  }
  const kept: UIMessage['parts'] = [];
  for (const part of parts) {
    const p = (typeof part === 'object' && part !== null ? part : {}) as Record<string, unknown>;
    if (p.type === 'text' && typeof p.text === 'string') kept.push({ type: 'text', text: p.text });
    else if (p.type === 'file' && typeof p.url === 'string' && typeof p.mediaType === 'string')
      kept.push({
        type: 'file',
        url: p.url,
        mediaType: p.mediaType,
        ...(typeof p.filename === 'string' ? { filename: p.filename } : {}),
      });
    else
      throw new ChatRequestError(
        `Chat ${chatId}: a user message may hold text and file parts only; it holds ${JSON.stringify(p.type)?.slice(0, 40) ?? 'a part without a type'}.`,
      );
  }
  return { role: 'user', parts: kept };
}

/** The cursor of the last batch in the stream of the agent workflow `workflowId` (0: none yet). */
export async function lastStreamCursor(client: Client, store: RunStreamStore, workflowId: string): Promise<number> {
  const description = await client.workflow.getHandle(workflowId).describe();
  const first = description.raw.workflowExecutionInfo?.firstRunId;
  const runId = typeof first === 'string' && first.length > 0 ? first : description.runId;
  const key = { runId, workflowId, firstExecutionRunId: runId };
  let cursor = 0;
  for (;;) {
    const batches = await store.read(key, cursor, DEFAULT_STREAM_READ_LIMIT);
    const last = batches.at(-1);
    if (last === undefined) return cursor;
    cursor = last.cursor;
  }
}
