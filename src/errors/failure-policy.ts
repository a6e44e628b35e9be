/**
 * What happens to a failure, by its type (the error's stable `name`, which becomes the Temporal
 * failure's `type`):
 *
 * - `retried`: whether Temporal retries the activity that failed with it. `false` failures are
 *   non-retryable whatever the activity's retry policy says; `'by-status'` depends on the HTTP
 *   status the error carries (`IdempotentRequestError`: 408, 425, 429 and 5xx are retried).
 * - `then`: once the failure is final (at once when it is not retried, after the last attempt
 *   otherwise): `model`, the call is answered to the model as a tool error and the run goes on;
 *   `run`, the run fails with the failure (the worker's setup or a tool definition is wrong, and
 *   no answer of the model can fix it); `caller`, it never happens inside a run: it is thrown to
 *   whoever called (a worker starting, a client helper, an approval decision being refused).
 */
export interface FailurePolicy {
  readonly retried: boolean | 'by-status';
  readonly then: 'model' | 'run' | 'caller';
}

/**
 * The failure catalogue: every failure type this library raises (each an error class, named by
 * its stable `name`), with its policy. It is the one place that says so: the errors' `retryable`
 * is read from it (`ChamviError`), and the activities' failures (`toFailure`,
 * {@link NON_RETRYABLE_TYPES}) and the workflow's handling of a failed tool call follow it (a test
 * checks that every error class has its entry, and the README's "Error policy" table against it).
 * Sandbox-safe: it imports nothing, so workflow code reads it too.
 *
 * Invalid tool input (failing the tool's schema) and a tool name the agent lacks, as the model
 * produced them, never become failures: the AI SDK answers them to the model in the model step.
 * The tool activities parse the input again with the schema of their own worker (it may be newer
 * than the model step's, or the input may come from workflow code): a refusal there is the AI
 * SDK's `InvalidToolInputError`, not retried, and the model is told.
 */
export const FAILURE_CATALOGUE = {
  // Told to the model at once: the model can correct the call, or must learn what happened.
  /** The run's `allow(toolName)` refused the call before anything was touched. */
  ToolNotAllowedError: { retried: false, then: 'model' },
  /** The input is wrong for the remote (thrown by the tool), or the tool's schema on the activity's worker refuses it (the AI SDK's class of that name). */
  InvalidToolInputError: { retried: false, then: 'model' },
  /** A planned call names a tool the agent does not have (a hand-written or older plan). */
  UnknownToolError: { retried: false, then: 'model' },
  /** The call needs an approval it does not have; nothing was applied. */
  ApprovalRequiredError: { retried: false, then: 'model' },
  /** The effect was applied and recorded as done, but its result is not JSON: the model must not try again. */
  EffectResultNotSerializableError: { retried: false, then: 'model' },
  /** The effect was applied and recorded, but its result is over Temporal's payload limit. */
  EffectResultTooLargeError: { retried: false, then: 'model' },

  // Fail the run: the worker's setup or a tool definition is wrong, whatever the model says.
  /** A custom `effectKey` returned no usable key. */
  InvalidEffectKeyError: { retried: false, then: 'run' },
  /** The activity computes another key than the one it was handed; nothing was applied. */
  EffectKeyMismatchError: { retried: false, then: 'run' },
  /** A tool definition is unusable (no `execute`, hooks without the effect-tool brand). */
  InvalidEffectToolError: { retried: false, then: 'run' },
  /** No worker of the task queue registers the agent. */
  UnknownAgentError: { retried: false, then: 'run' },
  /** Code written for the former `RunContext` reads `ctx.runId`. */
  LegacyContextFieldError: { retried: false, then: 'run' },
  /** A context without a usable `ctx.run.runId`. */
  InvalidToolContextError: { retried: false, then: 'run' },
  /** An input with no faithful canonical JSON (a schema transform made a Map, say): give the tool an `effectKey`. */
  UnsupportedJsonValueError: { retried: false, then: 'run' },
  /** An effect key the store cannot keep (a NUL character): fix `effectKey`. */
  EffectKeyNotStorableError: { retried: false, then: 'run' },
  /** The HTTP API saw the Idempotency-Key with another request: the key does not cover the input. */
  IdempotencyKeyReusedError: { retried: false, then: 'run' },
  /** The store's table or database cannot be used (another schema, SQLite older than 3.35). */
  EffectStoreSchemaError: { retried: false, then: 'run' },
  /** The SQLite file (or its folder) cannot be opened. */
  EffectStoreOpenError: { retried: false, then: 'run' },
  /** A store spec or option that cannot be understood. */
  InvalidEffectStoreSpecError: { retried: false, then: 'run' },
  /** A lease the store cannot honour (`leaseMs` out of range, an empty owner). */
  InvalidClaimRequestError: { retried: false, then: 'run' },
  /** An optional peer a feature needs is not installed (`pg`). */
  MissingPeerDependencyError: { retried: false, then: 'run' },
  /** Raised by workflow code: a run started with neither or both of prompt and messages, a bad duration. */
  InvalidAgentInputError: { retried: false, then: 'run' },
  /** The run's conversation lacks an entry in the store (pruned, or the workers use different stores). */
  ConversationEntryMissingError: { retried: false, then: 'run' },
  /** An entry of the run's conversation in the store is not what the run wrote (edited, planted, a cycle of parents). */
  ConversationEntryCorruptError: { retried: false, then: 'run' },
  /** An offloaded payload reads back as something other than what was stored (edited, truncated, not the driver's): every read gives the same bytes. */
  OffloadedPayloadCorruptError: { retried: false, then: 'run' },
  /** The model provider refused the step for good: no or a refused API key (401, 403), no such model (404), an invalid request or prompt. */
  ModelCallRejectedError: { retried: false, then: 'run' },
  /** An agent setting a durable run cannot honour, from `prepareStep` (a model step cannot apply its `toolsContext`, say). */
  UnsupportedAgentSettingError: { retried: false, then: 'run' },
  /** A model step returned two tool calls with one id (a provider or adapter bug): nothing of the step ran. */
  DuplicateToolCallIdError: { retried: false, then: 'run' },
  /** A compensation whose original effect has no usable record (none, another tool, another input or run): nothing was undone. */
  CompensationRefusedError: { retried: false, then: 'run' },
  /** Raised by workflow code: a compensation of a failed or cancelled run kept failing; the run fails with its rollback incomplete. */
  RollbackIncompleteError: { retried: false, then: 'run' },

  // Retried by the activity's retry policy; after the last attempt the model is told.
  /** Another attempt holds a live claim on the key. */
  EffectBusyError: { retried: true, then: 'model' },
  /** This attempt lost its claim before applying anything. */
  EffectClaimLostError: { retried: true, then: 'model' },
  /** The store could not be read or written before the effect; nothing was applied. */
  EffectStoreError: { retried: true, then: 'model' },
  /** `alreadyApplied` cannot tell yet whether the effect exists. */
  EffectOutcomeUnknownError: { retried: true, then: 'model' },
  /** The HTTP API is still processing a request with the same Idempotency-Key. */
  IdempotencyKeyInProgressError: { retried: true, then: 'model' },
  /** The HTTP API refused a zombie attempt's stale fence; a newer attempt wrote there. */
  EffectFenceRefusedError: { retried: true, then: 'model' },
  /** A compare-and-swap push kept losing to another writer. */
  RemoteRefContendedError: { retried: true, then: 'model' },
  /** A git command failed (mostly transient: network, remote). */
  GitCommandError: { retried: true, then: 'model' },
  /** An HTTP API refused a request sent with an Idempotency-Key: 408, 425, 429, 5xx are retried, other 4xx are not. */
  IdempotentRequestError: { retried: 'by-status', then: 'model' },
  /** A payload External Storage offloaded to the store cannot be read back (the store is down, or another one). */
  OffloadedPayloadMissingError: { retried: true, then: 'model' },

  // Retried by the model step's retry policy (honouring the provider's retry-after); after the last attempt the run fails.
  /** The model provider failed the step in a way a retry can fix (429, 5xx, a timeout). */
  ModelCallFailedError: { retried: true, then: 'run' },

  // Never inside a run: thrown to the caller.
  /** The worker's effect store cannot be opened when the worker starts; the worker is not created. */
  EffectStoreUnavailableError: { retried: false, then: 'caller' },
  /** A health endpoint option is unusable (a port that is no port, one in use). */
  WorkerHealthError: { retried: false, then: 'caller' },
  /** `decideApproval` for a call that is not waiting for a decision. */
  ApprovalNotPendingError: { retried: false, then: 'caller' },
  /** A call id that waits in more than one run of a run's tree (the run and its sub-agent runs). */
  ApprovalAmbiguousError: { retried: false, then: 'caller' },
  /** `decideApproval` without an approval secret to sign the decision with. */
  ApprovalSecretMissingError: { retried: false, then: 'caller' },
  /** An approval secret under 16 bytes: the worker (or plugin) is not created, no token is minted. */
  InvalidApprovalSecretError: { retried: false, then: 'caller' },
  /** `createApprovalToken` with claims it cannot sign (an `expiresAt` that is no finite time, say). */
  InvalidApprovalClaimsError: { retried: false, then: 'caller' },
  /** Raised by workflow code: an approval decision whose token does not verify, or a call decided already. */
  ApprovalRefusedError: { retried: false, then: 'caller' },
  /** An option out of its range where it is given (`abortGraceMs`, `pollMs`, a stream cursor `from`). */
  InvalidOptionError: { retried: false, then: 'caller' },
  /** A run stream store used after its `close()` (a reader or writer that outlived it). */
  RunStreamClosedError: { retried: false, then: 'caller' },
  /** A chat request `chatRoute` cannot take (not JSON, no chat id, a part a user message cannot have): answered 400. */
  ChatRequestError: { retried: false, then: 'caller' },
  /** A chat request whose turns do not match the server's (a turn still running, one sent twice): answered 409. */
  ChatTurnConflictError: { retried: false, then: 'caller' },
  /** An approval answer from the chat page that does not match the waiting call: answered 409. */
  ApprovalAnswerRefusedError: { retried: false, then: 'caller' },
  /** A chat that is not the requester's (`chatRoute`'s `authorize` said no): answered 403. */
  ChatForbiddenError: { retried: false, then: 'caller' },
  /** `rollbackRun` for a run that has not finished yet: wait for it, or cancel it. */
  RunNotFinishedError: { retried: false, then: 'caller' },
  /** An agent tool was called outside a chamvi worker or `runAgent`. */
  AgentToolOutsideRunError: { retried: false, then: 'caller' },
  /** A test environment found no Temporal server binary and could not download one. */
  TemporalServerNotFoundError: { retried: false, then: 'caller' },
} as const satisfies Record<string, FailurePolicy>;

/** A failure type the catalogue knows. */
export type CataloguedFailure = keyof typeof FAILURE_CATALOGUE;

/** The policy of a failure type, or `undefined` for a type this library does not raise (a tool's own error). */
export function failurePolicyOf(type: string | null | undefined): FailurePolicy | undefined {
  if (type === null || type === undefined || !Object.hasOwn(FAILURE_CATALOGUE, type)) return undefined;
  return FAILURE_CATALOGUE[type as CataloguedFailure];
}

/**
 * Failure types that retrying cannot fix: the catalogue's `retried: false` entries. The chamvi
 * activities fail them non-retryably (whoever threw them: a library error, or a tool's own error
 * of that name), so Temporal does not retry them whatever the retry policy says; the workflow then
 * answers the model or fails the run (see `then`). Retry policies need not list them.
 */
export const NON_RETRYABLE_TYPES: readonly string[] = Object.entries(FAILURE_CATALOGUE as Record<string, FailurePolicy>)
  .filter(([, policy]) => policy.retried === false && policy.then !== 'caller')
  .map(([type]) => type);
