import {
  APICallError,
  InvalidArgumentError,
  InvalidDataContentError,
  InvalidMessageRoleError,
  InvalidPromptError,
  InvalidToolApprovalError,
  LoadAPIKeyError,
  LoadSettingError,
  MessageConversionError,
  MissingToolResultsError,
  NoSuchModelError,
  ToolCallNotFoundForApprovalError,
  UnsupportedFunctionalityError,
} from 'ai';
import { ChamviError } from '../src/errors/chamvi-error.js';
import { toFailure } from '../common/to-failure.js';

/**
 * The model provider refused a model step in a way no retry can change: the API key is missing
 * (`LoadAPIKeyError`) or refused (401, 403), the model does not exist (404), the request or the
 * prompt is invalid (400, 422, and the AI SDK's prompt validation: `InvalidPromptError`,
 * `MissingToolResultsError`, `InvalidMessageRoleError`, `InvalidDataContentError`,
 * `MessageConversionError`, `InvalidToolApprovalError`, `ToolCallNotFoundForApprovalError`), a
 * setting is missing or unsupported. The
 * model step fails non-retryably and the run fails at once with this message; fix the worker's
 * setup (or the agent) and start the run again.
 */
export class ModelCallRejectedError extends ChamviError {
  static override readonly errorName = 'ModelCallRejectedError';
  /** The provider's HTTP status, when it answered. */
  readonly statusCode: number | undefined;
  constructor(message: string, { statusCode, ...options }: ModelCallErrorOptions = {}) {
    super(message, options);
    this.statusCode = statusCode;
  }
}

/** What the model call errors take beside their message: the provider's status and the AI SDK's error as `cause`. */
export interface ModelCallErrorOptions extends ErrorOptions {
  /** The provider's HTTP status, when it answered. */
  readonly statusCode?: number;
}

/**
 * The model provider failed a model step in a way a retry can fix: a rate limit (429), an
 * overloaded or failing server (5xx), a timeout. Retried by the model step's retry policy; when
 * the provider says when to come back (`retry-after-ms`, `retry-after`), the next attempt waits
 * exactly that long instead of the policy's backoff (Temporal's `nextRetryDelay`).
 */
export class ModelCallFailedError extends ChamviError {
  static override readonly errorName = 'ModelCallFailedError';
  /** The provider's HTTP status, when it answered. */
  readonly statusCode: number | undefined;
  /** How long the provider asked to wait before the next call, in ms. */
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    {
      statusCode,
      retryAfterMs,
      ...options
    }: ModelCallErrorOptions & {
      /** How long the provider asked to wait before the next call, in ms. */
      readonly retryAfterMs?: number;
    } = {},
  ) {
    super(message, options);
    this.statusCode = statusCode;
    this.retryAfterMs = retryAfterMs;
  }
}

/** Which model step failed, for the message. */
export interface ModelCallScope {
  readonly agent: string;
  /** 0-based step index. */
  readonly step: number;
  /** `provider:modelId`, or the model id string. */
  readonly model: string;
}

/**
 * What the model step throws for an error of the model call: a non-retryable
 * {@link ModelCallRejectedError} for errors no retry can fix, a retryable ApplicationFailure of
 * type {@link ModelCallFailedError} carrying the provider's retry-after as `nextRetryDelay` for a
 * retryable provider error, and anything else (a network error, an abort) as it is, for the retry
 * policy.
 */
export function modelCallFailure(error: unknown, scope: ModelCallScope): unknown {
  const where = `The model call of agent "${scope.agent}" (step ${scope.step + 1}, model ${scope.model})`;
  if (LoadAPIKeyError.isInstance(error) || LoadSettingError.isInstance(error)) {
    return new ModelCallRejectedError(
      `${where} cannot be made: ${error.message} Retrying cannot fix this: set it on the worker, then start the run again.`,
      { cause: error },
    );
  }
  if (MissingToolResultsError.isInstance(error)) {
    return new ModelCallRejectedError(
      `${where} is invalid: the conversation has tool calls without a tool result (${error.toolCallIds.join(', ')}): ${error.message} Retrying cannot fix this: every assistant tool call needs its tool result before the next message. A chat client's history lacks them when its stream had no tool outputs; start the turn from the stored conversation (agentConversation, loadConversation) instead of the messages the browser sent.`,
      { cause: error },
    );
  }
  if (
    isPromptValidationError(error) ||
    InvalidArgumentError.isInstance(error) ||
    UnsupportedFunctionalityError.isInstance(error) ||
    NoSuchModelError.isInstance(error)
  ) {
    return new ModelCallRejectedError(
      `${where} is invalid: ${error.message} Retrying cannot fix this: fix the agent (its model, instructions or tools) or the run's input.`,
      { cause: error },
    );
  }
  if (!APICallError.isInstance(error)) return error;
  const status = error.statusCode;
  const said = status === undefined ? error.message : `HTTP ${status}: ${error.message}`;
  if (!error.isRetryable) {
    return new ModelCallRejectedError(
      `${where} was refused by the provider (${said}). Retrying cannot fix this: ${fixFor(status)}.`,
      { statusCode: status, cause: error },
    );
  }
  const retryAfterMs = retryAfter(error.responseHeaders);
  const failed = new ModelCallFailedError(
    `${where} failed (${said}); it is retried${retryAfterMs === undefined ? ' by the retry policy' : ` in ${retryAfterMs} ms, as the provider asked`}.`,
    { statusCode: status, retryAfterMs, cause: error },
  );
  return toFailure(failed, retryAfterMs === undefined ? {} : { nextRetryDelay: retryAfterMs });
}

/** The AI SDK's errors for a prompt it refuses to send: the same prompt is refused on every retry. */
function isPromptValidationError(error: unknown): error is Error {
  return (
    InvalidPromptError.isInstance(error) ||
    InvalidMessageRoleError.isInstance(error) ||
    InvalidDataContentError.isInstance(error) ||
    MessageConversionError.isInstance(error) ||
    InvalidToolApprovalError.isInstance(error) ||
    ToolCallNotFoundForApprovalError.isInstance(error)
  );
}

function fixFor(status: number | undefined): string {
  if (status === 401 || status === 403) return "check the worker's API key for the provider and what it may access";
  if (status === 404) return 'check the model id and the provider base URL';
  return "check the request the agent makes (its prompt, its tools' schemas, the provider options)";
}

/**
 * The wait a provider asked for: `retry-after-ms` (ms), else `retry-after` (seconds, or an HTTP
 * date), as the AI SDK reads them; `undefined` when absent or unreadable.
 */
export function retryAfter(headers: Record<string, string> | undefined): number | undefined {
  if (headers === undefined) return undefined;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number.parseFloat(lower['retry-after-ms'] ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const value = lower['retry-after'];
  if (value === undefined) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** `provider:modelId` of an AI SDK model (a gateway model id string as it is). */
export function modelName(model: unknown): string {
  if (typeof model === 'string') return model;
  const { provider, modelId } = (model ?? {}) as { provider?: unknown; modelId?: unknown };
  return [provider, modelId].filter((part): part is string => typeof part === 'string').join(':') || 'unknown';
}
