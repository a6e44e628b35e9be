import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ChatRequestError } from './chat-errors.js';

/** Longest chat id `chatRoute` takes, in characters (a turn's workflow id adds `:<turn>`). */
export const MAX_CHAT_ID_LENGTH = 200;

/** The workflow id of turn `turn` (1-based) of chat `chatId`: `<chat id>:<turn>`. */
export function chatTurnWorkflowId(chatId: string, turn: number): string {
  return `${chatId}:${turn}`;
}

/**
 * `chatId` when it can name a chat: 1 to {@link MAX_CHAT_ID_LENGTH} characters, none of them a
 * control character or whitespace.
 * @throws ChatRequestError otherwise.
 */
export function chatIdOption(chatId: unknown): string {
  if (
    typeof chatId !== 'string' ||
    chatId.length === 0 ||
    chatId.length > MAX_CHAT_ID_LENGTH ||
    /[\s\p{Cc}]/u.test(chatId)
  ) {
    throw new ChatRequestError(
      `The chat request's id must be a string of 1 to ${MAX_CHAT_ID_LENGTH} characters without whitespace or control characters (useChat's \`id\`); got ${JSON.stringify(chatId)?.slice(0, 60) ?? String(chatId)}.`,
    );
  }
  return chatId;
}

/** Whether turn `turn` of the chat was started; its status when it was. */
export async function turnStatus(client: Client, chatId: string, turn: number): Promise<string | undefined> {
  try {
    return (await client.workflow.getHandle(chatTurnWorkflowId(chatId, turn)).describe()).status.name;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
}

/**
 * The chat's latest turn started (0: none) and its status: found with about 2·log2(turns)
 * describe calls (doubling, then halving), as turns are started one after the other.
 */
export async function latestChatTurn(client: Client, chatId: string): Promise<{ turn: number; status?: string }> {
  let known = 0;
  let status: string | undefined;
  let probe = 1;
  for (;;) {
    const found = await turnStatus(client, chatId, probe);
    if (found === undefined) break;
    known = probe;
    status = found;
    probe *= 2;
  }
  // The latest is in [known, probe).
  let high = probe;
  while (high - known > 1) {
    const middle = Math.floor((known + high) / 2);
    const found = await turnStatus(client, chatId, middle);
    if (found === undefined) high = middle;
    else [known, status] = [middle, found];
  }
  return known === 0 ? { turn: 0 } : { turn: known, ...(status !== undefined ? { status } : {}) };
}
