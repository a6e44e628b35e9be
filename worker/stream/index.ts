// @chamvi/temporal/stream: an agent run streamed to the user's screen. The workers write what the
// model steps stream to a run stream store (createAgentWorker's `stream` option); a route returns
// runUIMessageStream(...) to useChat; readRunStream is the raw log from a cursor.
export type {
  RunStreamBatch,
  RunStreamKey,
  RunStreamPart,
  RunStreamStore,
  RunStreamWriterRef,
} from '../../src/stream/run-stream-store.js';
export { DEFAULT_STREAM_RETENTION_MS } from '../../src/stream/run-stream-store.js';
export { MemoryRunStreamStore, type MemoryRunStreamOptions } from '../../src/stream/memory-run-stream.js';
export {
  SqliteRunStreamStore,
  DEFAULT_SQLITE_STREAM_POLL_MS,
  type SqliteRunStreamOptions,
} from '../../src/stream/sqlite-run-stream.js';
export {
  PostgresRunStreamStore,
  DEFAULT_PG_STREAM_SAFETY_POLL_MS,
  type PostgresRunStreamOptions,
} from '../../src/stream/postgres-run-stream.js';
export { createRunStreamStore, type CreateRunStreamStoreOptions } from '../../src/stream/create-run-stream-store.js';
export { readRunStream, type ReadRunStreamOptions } from '../../src/stream/read-run-stream.js';
export { RunStreamUIState, type RunExecutionOrder } from '../../src/stream/ui-chunks.js';
export {
  RunStreamWriter,
  STREAM_CLOSE_BUDGET_MS,
  type RunStreamWriteProblem,
} from '../../src/stream/run-stream-writer.js';
export {
  runUIMessageStream,
  RUN_STREAM_STOPPED,
  DEFAULT_RUN_POLL_MS,
  type RunUIMessageStreamOptions,
  type ChamviCursorChunk,
} from './run-ui-message-stream.js';
export { approvalIdOf, type ChamviEffectChunk, type ChamviApprovalChunk } from './run-progress-parts.js';
export type { PendingApproval, RunEffectReport } from '../../common/index.js';
export { chatRoute, type ChatRoute, type ChatRouteOptions } from './chat-route.js';
export { chatTurnWorkflowId, MAX_CHAT_ID_LENGTH } from './chat-turns.js';
export {
  approvalAnswersOf,
  decideApprovalAnswers,
  type ApprovalAnswer,
  type DecideAnswersOptions,
} from './chat-approvals.js';
export {
  ApprovalAnswerRefusedError,
  ChatForbiddenError,
  ChatRequestError,
  ChatTurnConflictError,
} from './chat-errors.js';
export type { ToolResultPart } from '../../src/stream/tool-result-parts.js';
