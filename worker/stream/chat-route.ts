import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { convertToModelMessages, createUIMessageStreamResponse, type UIMessage } from 'ai';
import type { JsonMessage } from '../../common/index.js';
import type { ConversationStore } from '../../src/stores/conversation-store.js';
import type { RunStreamStore } from '../../src/stream/run-stream-store.js';
import { agentConversation } from '../../client/agent-conversation.js';
import { startAgentRun, type StartAgentRunOptions } from '../../client/start-agent-run.js';
import { approvalAnswersOf, decideApprovalAnswers } from './chat-approvals.js';
import { answerRefusals, ChatForbiddenError, ChatRequestError, ChatTurnConflictError } from './chat-errors.js';
import { chatIdOption, chatTurnWorkflowId, latestChatTurn, turnStatus } from './chat-turns.js';
import { lastStreamCursor, userMessageOf } from './chat-request.js';
import { runUIMessageStream } from './run-ui-message-stream.js';
import { chatMessages } from './chat-messages.js';

/** What {@link chatRoute} takes. @beta @experimental */
export interface ChatRouteOptions {
  /** A Temporal client of the workers' namespace. */
  readonly client: Client;
  /** The run stream store the workers write to (their `stream` option). */
  readonly stream: RunStreamStore;
  /** The workers' store (their `store` option): each turn's history is read from it, never from the page. */
  readonly conversations: ConversationStore;
  /** The registered agent that answers. */
  readonly agent: string;
  /** The workers' task queue. */
  readonly taskQueue: string;
  /**
   * Whether the request may use chat `chatId` (your session check). Default: every request may
   * use every chat id, so anyone who learns a chat id can read, continue and approve in it.
   * Called before anything is asked of Temporal; `false` answers 403.
   */
  readonly authorize?: (request: Request, chatId: string) => boolean | Promise<boolean>;
  /** Who decides an approval answered from this request, for the run's record. Default: none (`approver` absent). */
  readonly approver?: (request: Request, chatId: string) => string | undefined | Promise<string | undefined>;
  /** The workers' approval secret. Default: `CHAMVI_APPROVAL_SECRET`. */
  readonly approvalSecret?: string | Uint8Array;
  /** More of each turn's start options (trigger, state, maxSteps, memo, ...). */
  readonly run?: Omit<
    StartAgentRunOptions,
    | 'agent'
    | 'taskQueue'
    | 'workflowId'
    | 'prompt'
    | 'messages'
    | 'checkpoint'
    | 'runId'
    | 'workflowIdReusePolicy'
    | 'workflowIdConflictPolicy'
  >;
  /** `pollMs` of the streams (see `runUIMessageStream`). */
  readonly pollMs?: number;
}

/** The two handlers of a chat, `POST` for `useChat`'s requests and `GET` for its `resume`, and its stored messages. @beta @experimental */
export interface ChatRoute {
  /**
   * Takes `DefaultChatTransport`'s body (`{ id, messages, trigger }`). A last message from the
   * user starts the chat's next turn; a last assistant message with answered approvals decides
   * them and streams the rest of the turn. Answers the turn's UI message stream, or a JSON
   * `{ error, message }` with 400 ({@link ChatRequestError}), 403 ({@link ChatForbiddenError}) or
   * 409 ({@link ChatTurnConflictError}, `ApprovalAnswerRefusedError`).
   */
  POST(request: Request): Promise<Response>;
  /**
   * Resumes chat `chatId` (`DefaultChatTransport` asks `GET <api>/<chat id>/stream`): the latest
   * turn's whole stream while it runs (it ends at a wait for approval, as POST's do), else 204.
   */
  GET(request: Request, chatId: string): Promise<Response>;
  /**
   * The messages to open chat `chatId` with (`useChat`'s `messages`), rebuilt from the workers'
   * store and the turns' results, not from any stream: per completed turn its user message and one
   * assistant message (id `chamvi-<run id>`, as its stream sent it) whose tool parts are in their
   * final state, with their approval and effect report (`resultProviderMetadata.chamvi`). A turn
   * that runs or waits adds its user message only (`resume` streams the rest; before its first
   * model step, while no worker answers its progress query, not even that: a later reload shows
   * it); one that failed is left out (it may be sent again). Server code: it does not call `authorize` (there is no
   * request), so check that the user may read the chat first.
   * @throws ChatRequestError for an id that cannot name a chat.
   */
  messages(chatId: string): Promise<UIMessage[]>;
}

/**
 * A multi-turn chat over agent runs, for `useChat` with `DefaultChatTransport`, `resume: true`
 * and `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`:
 *
 * ```ts
 * const chat = chatRoute({ client, stream, conversations: store, agent: 'assistant', taskQueue: 'agents' });
 * export const POST = (request: Request) => chat.POST(request);
 * // app/api/chat/[id]/stream/route.ts
 * export const GET = async (request: Request, { params }: { params: Promise<{ id: string }> }) =>
 *   chat.GET(request, (await params).id);
 * ```
 *
 * One workflow per turn: turn `n` (the number of user messages the page sends) of chat `id` is
 * workflow `<id>:<n>` (see {@link chatTurnWorkflowId}). It starts once turn `n - 1` completed,
 * from that turn's stored conversation (read from `conversations` and checked entry by entry)
 * followed by the page's new user message. Of what the page sends only the chat id, the count
 * and last of its user messages (text and file parts) and its approval answers are used: earlier
 * assistant and tool messages, edited or not, never reach the model. A turn that failed may be
 * sent again; one that completed or runs may not (409).
 *
 * An approval answer is checked against the call the turn waits for (approval id, tool, input
 * fingerprint; see `decideApprovalAnswers`) and decided through `decideApproval`, the same signed
 * decision `chamvi approve` sends; then the turn streams on from where the page's stream ended.
 * @beta @experimental
 */
export function chatRoute(options: ChatRouteOptions): ChatRoute {
  return {
    POST: (request) => answerRefusals(() => post(options, request)),
    GET: (request, chatId) => answerRefusals(() => resume(options, request, chatId)),
    messages: async (chatId) => chatMessages(options.client, options.conversations, chatIdOption(chatId)),
  };
}

async function post(options: ChatRouteOptions, request: Request): Promise<Response> {
  const body = (await request.json().catch(() => undefined)) as
    { id?: unknown; messages?: unknown; trigger?: unknown } | undefined;
  if (typeof body !== 'object' || body === null)
    throw new ChatRequestError(
      "The chat request is not a JSON object: send DefaultChatTransport's body ({ id, messages }).",
    );
  const chatId = chatIdOption(body.id);
  if (body.trigger === 'regenerate-message') {
    throw new ChatRequestError(
      `Chat ${chatId}: regenerating an answer is not supported (a turn's effects may have been applied); send a new message.`,
    );
  }
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Partial<UIMessage>>) : [];
  const last = messages.at(-1);
  if (last === undefined) throw new ChatRequestError(`Chat ${chatId}: the request has no messages.`);
  await authorized(options, request, chatId);
  const turn = messages.filter((m) => m.role === 'user').length;
  if (last.role === 'assistant') return continueTurn(options, request, chatId, turn, last);
  if (last.role !== 'user')
    throw new ChatRequestError(
      `Chat ${chatId}: the last message must be the user's or approval answers in the assistant's; it is ${String(last.role)}.`,
    );
  const user = await convertToModelMessages([userMessageOf(chatId, last)]);
  const history = turn === 1 ? [] : await previousTurn(options, chatId, turn - 1);
  const workflowId = chatTurnWorkflowId(chatId, turn);
  try {
    await startAgentRun(options.client, {
      ...options.run,
      agent: options.agent,
      taskQueue: options.taskQueue,
      workflowId,
      messages: [...history, ...(user as unknown as JsonMessage[])],
      // A failed turn may be sent again; a completed one is the chat's history.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      workflowIdConflictPolicy: 'FAIL',
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    throw new ChatTurnConflictError(
      `Chat ${chatId}: turn ${turn} was sent already (workflow ${workflowId} runs or completed); nothing was started. Reload the chat.`,
    );
  }
  return streamTurn(options, request, workflowId);
}

/** The stored conversation of turn `turn`, which must have completed. */
async function previousTurn(options: ChatRouteOptions, chatId: string, turn: number): Promise<JsonMessage[]> {
  const workflowId = chatTurnWorkflowId(chatId, turn);
  const status = await turnStatus(options.client, chatId, turn);
  if (status !== 'COMPLETED') {
    throw new ChatTurnConflictError(
      status === undefined
        ? `Chat ${chatId}: turn ${turn} was never started, so turn ${turn + 1} cannot follow it; nothing was started. The page's messages are not this chat's: reload it.`
        : `Chat ${chatId}: turn ${turn} (workflow ${workflowId}) is ${status}, not completed; nothing was started. Wait for it (or answer its approvals), or send turn ${turn} again if it failed.`,
    );
  }
  const { messages } = await agentConversation(options.client, workflowId, options.conversations);
  return messages;
}

async function continueTurn(
  options: ChatRouteOptions,
  request: Request,
  chatId: string,
  turn: number,
  last: Partial<UIMessage>,
): Promise<Response> {
  const answers = approvalAnswersOf(last);
  if (answers.length === 0) {
    throw new ChatRequestError(
      `Chat ${chatId}: the last message is the assistant's but answers no approval; send a user message or addToolApprovalResponse's answers.`,
    );
  }
  const workflowId = chatTurnWorkflowId(chatId, turn);
  if ((await turnStatus(options.client, chatId, turn)) !== 'RUNNING') {
    throw new ChatTurnConflictError(
      `Chat ${chatId}: turn ${turn} (workflow ${workflowId}) waits for no approval; nothing was decided. Reload the chat.`,
    );
  }
  // Read before deciding: the page has every batch up to here (its stream ended at the wait), and
  // the run writes nothing more until it is decided.
  const from = await lastStreamCursor(options.client, options.stream, workflowId);
  const approver = await options.approver?.(request, chatId);
  await decideApprovalAnswers(options.client, workflowId, answers, {
    ...(approver !== undefined ? { approver } : {}),
    ...(options.approvalSecret !== undefined ? { secret: options.approvalSecret } : {}),
  });
  return streamTurn(options, request, workflowId, from);
}

async function resume(options: ChatRouteOptions, request: Request, chatId: string): Promise<Response> {
  const id = chatIdOption(chatId);
  await authorized(options, request, id);
  const latest = await latestChatTurn(options.client, id);
  if (latest.status !== 'RUNNING' && latest.status !== 'PAUSED') return new Response(null, { status: 204 });
  return streamTurn(options, request, chatTurnWorkflowId(id, latest.turn));
}

function streamTurn(options: ChatRouteOptions, request: Request, workflowId: string, from?: number): Response {
  const stream = runUIMessageStream({
    client: options.client,
    stream: options.stream,
    workflowId,
    endOnApproval: true,
    signal: request.signal,
    ...(from !== undefined ? { from } : {}),
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
  });
  return createUIMessageStreamResponse({ stream });
}

async function authorized(options: ChatRouteOptions, request: Request, chatId: string): Promise<void> {
  if (options.authorize === undefined || (await options.authorize(request, chatId))) return;
  throw new ChatForbiddenError(
    `Chat ${chatId} is not this requester's (authorize said no); nothing was read, started or decided.`,
  );
}
