import { failurePolicyOf } from './failure-policy.js';
import { ChamviError } from './chamvi-error.js';

/**
 * A tool call was refused by the run's `allow(toolName)` check. Thrown before the effect store
 * or the remote system is touched. Not retryable: the same call would be refused again.
 */
export class ToolNotAllowedError extends ChamviError {
  static override readonly errorName = 'ToolNotAllowedError';
  constructor(readonly toolName: string) {
    super(
      `Tool "${toolName}" is not allowed in this run. Allow it in the run's allow(toolName) check, or remove it from the agent's tools.`,
    );
  }
}

/**
 * A tool call's input is wrong in a way the tool's schema cannot express (the issue it names is
 * closed, the branch it would push to does not exist). Throw it from `execute`, `alreadyApplied`
 * or `effectKey` before anything is applied. The AI SDK's own `InvalidToolInputError` thrown in an
 * activity gets the same policy (Temporal names a failure after the error's constructor); the tool
 * activities throw it when the tool's schema on their worker refuses the input (see the failure
 * catalogue). Input the model produced that fails the schema never gets that far: the AI SDK
 * answers it to the model in the model step. Not retryable: the same input fails again; the model
 * is told and can correct the call.
 * @public
 */
export class InvalidToolInputError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'InvalidToolInputError';
}

/** An effect tool definition is unusable (for example `execute` is missing). Thrown at definition time. */
export class InvalidEffectToolError extends ChamviError {
  static override readonly errorName = 'InvalidEffectToolError';
}

/**
 * A custom `effectKey` returned something other than a non-empty string. Not retryable: the same
 * input yields the same key.
 */
export class InvalidEffectKeyError extends ChamviError {
  static override readonly errorName = 'InvalidEffectKeyError';
  constructor({ toolName, got }: { readonly toolName: string; readonly got: unknown }) {
    const shown = typeof got === 'string' ? 'an empty string' : `a value of type ${got === null ? 'null' : typeof got}`;
    super(
      `effectKey of tool "${toolName}" returned ${shown}. Return a non-empty string, e.g. \`\${ctx.run.runId}:${toolName}:\${input.id}\`, or omit effectKey to use the default key.`,
    );
  }
}

/**
 * A field of the former `RunContext` was read (`ctx.runId`, `ctx.agent`, `ctx.trigger`, `ctx.signal`). Reading
 * `undefined` instead would silently collapse custom effect keys across runs, so it fails loudly.
 */
export class LegacyContextFieldError extends ChamviError {
  static override readonly errorName = 'LegacyContextFieldError';
  constructor(field: string) {
    super(
      `ctx.${field} is a field of the 0.1 RunContext (@chamvi/core 0.1); in @chamvi/temporal, effectKey, alreadyApplied and execute get the ToolContext, which keeps it at ctx.run.${field}. Read ctx.run.${field} instead.`,
    );
  }
}

/**
 * A context handed to `wrapToolsForRun` has no usable `ctx.run.runId` (a former `RunContext` with a
 * top-level `runId`, a context without `run`, an empty id). Every effect key of the run starts with
 * the run id, so the tools cannot be wrapped. Not retryable: the same context fails again.
 */
export class InvalidToolContextError extends ChamviError {
  static override readonly errorName = 'InvalidToolContextError';
  constructor({ where, ctx }: { readonly where: string; readonly ctx: unknown }) {
    const run = (ctx as { run?: unknown } | null | undefined)?.run;
    const runId = (run as { runId?: unknown } | null | undefined)?.runId;
    const got =
      typeof ctx !== 'object' || ctx === null
        ? `the context is ${ctx === null ? 'null' : typeof ctx}`
        : typeof run !== 'object' || run === null
          ? 'the context has no run'
          : `ctx.run.runId is ${typeof runId === 'string' ? 'an empty string' : runId === null ? 'null' : typeof runId}`;
    const legacy = Object.hasOwn(ctx ?? {}, 'runId')
      ? ' It looks like a 0.1 RunContext (ctx.runId): the run id now sits at ctx.run.runId.'
      : '';
    super(
      `${where}: ${got}, but ctx.run.runId must be a non-empty string: every effect key of the run starts with it.${legacy} Build the context with createToolContext({ runId, agent, trigger, state, artifacts }).`,
    );
  }
}

/**
 * Another attempt holds a live claim on this effect key and did not finish within the wait bound.
 * Retryable: a later attempt finds the winner's record or an expired lease.
 */
export class EffectBusyError extends ChamviError {
  static override readonly errorName = 'EffectBusyError';
  readonly key: string;
  /** How long this call waited for the other attempt's claim, in ms. */
  readonly waitedMs: number;
  constructor({ key, waitedMs }: { readonly key: string; readonly waitedMs: number }) {
    super(
      `Effect "${key}" is being applied by another attempt (its claim is still live after waiting ${waitedMs} ms). Retry later; the effect is not applied twice.`,
    );
    this.key = key;
    this.waitedMs = waitedMs;
  }
}

/**
 * This attempt lost its claim on the key (its lease expired and another attempt took over) before
 * the effect was applied, so it did not apply it. Retryable.
 */
export class EffectClaimLostError extends ChamviError {
  static override readonly errorName = 'EffectClaimLostError';
  constructor(readonly key: string) {
    super(
      `This attempt lost its claim on effect "${key}" before applying it (lease expired or taken over); nothing was applied. A retry reads the winner's record. Raise the lease or heartbeat more often if this repeats.`,
    );
  }
}

/** The effect store could not be read or written. Retryable; before the effect nothing was executed. */
export class EffectStoreError extends ChamviError {
  static override readonly errorName = 'EffectStoreError';
}

/**
 * `alreadyApplied` could not tell whether the effect exists (for example a remote read that may
 * lag right after a timeout). The call fails retryably instead of executing again.
 * @public
 */
export class EffectOutcomeUnknownError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'EffectOutcomeUnknownError';
}

/**
 * A durable effect store found a table it cannot use (missing or mistyped columns, another
 * schema version) or a database it cannot work with (SQLite older than 3.35, which lacks
 * `RETURNING`). Not retryable: fix the schema or the database, or point the store elsewhere.
 */
export class EffectStoreSchemaError extends ChamviError {
  static override readonly errorName = 'EffectStoreSchemaError';
}

/**
 * An HTTP API answered 409 to a request carrying an `Idempotency-Key`: an earlier request with the
 * same key is still being processed. Retryable: retry later with the same key; the server then
 * replays the first request's answer instead of applying the effect again.
 */
export class IdempotencyKeyInProgressError extends ChamviError {
  static override readonly errorName = 'IdempotencyKeyInProgressError';
  readonly key: string;
  readonly url: string;
  constructor({ key, url }: { readonly key: string; readonly url: string }) {
    super(
      `${url} answered 409: a request with Idempotency-Key "${key}" is still in progress there. Retry later with the same key; the effect is not applied twice.`,
    );
    this.key = key;
    this.url = url;
  }
}

/**
 * An HTTP API answered 422 to a request carrying an `Idempotency-Key`: the key was already used
 * with a different request (other body or endpoint). Not retryable: the same call gets the same
 * answer. The effect key maps different inputs to one key; fix `effectKey` (or let the default
 * key, which hashes the input, apply).
 */
export class IdempotencyKeyReusedError extends ChamviError {
  static override readonly errorName = 'IdempotencyKeyReusedError';
  readonly key: string;
  readonly url: string;
  constructor({ key, url }: { readonly key: string; readonly url: string }) {
    super(
      `${url} answered 422: Idempotency-Key "${key}" was already used with a different request. Make the effect key cover everything that changes the request (the default key hashes the whole input).`,
    );
    this.key = key;
    this.url = url;
  }
}

/**
 * An HTTP API answered a request carrying an `Idempotency-Key` with an error other than 409 or
 * 422. Retryable for 408, 425, 429 and 5xx (a retry sends the same key, so it cannot apply the
 * effect twice); not retryable for other 4xx answers, which the same request would get again.
 */
export class IdempotentRequestError extends ChamviError {
  static override readonly errorName = 'IdempotentRequestError';
  /** Retried by status (the catalogue's `'by-status'`): 408, 425, 429 and 5xx. */
  override readonly retryable: boolean;
  readonly status: number;
  readonly key: string;
  readonly url: string;
  constructor({
    status,
    key,
    url,
    detail,
  }: {
    readonly status: number;
    readonly key: string;
    readonly url: string;
    /** What the API said, for the message; may be empty. */
    readonly detail: string;
  }) {
    const retryable = status >= 500 || status === 408 || status === 425 || status === 429;
    super(
      `${url} answered ${status} to the request with Idempotency-Key "${key}"${detail ? `: ${detail}` : ''}. ${retryable ? 'Retry with the same key.' : 'Fix the request; retrying it unchanged gets the same answer.'}`,
    );
    this.retryable = retryable;
    this.status = status;
    this.key = key;
    this.url = url;
  }
}

/**
 * An HTTP API refused a request sent with the claim's fence number (`idempotentFetch` with
 * `fenceHeader`), answering 412: it has already accepted a request for this effect key with a
 * higher fence, that is from a newer attempt that took the key over. This attempt applied nothing
 * there. Retryable: a retry finds the newer attempt's record (or takes the key over properly).
 */
export class EffectFenceRefusedError extends ChamviError {
  static override readonly errorName = 'EffectFenceRefusedError';
  readonly key: string;
  readonly fence: number;
  readonly url: string;
  constructor({ key, fence, url }: { readonly key: string; readonly fence: number; readonly url: string }) {
    super(
      `${url} answered 412 to the request for effect "${key}" with fence ${fence}: a newer attempt of this effect (a higher fence) has already written there, so this attempt applied nothing. Retry; the retry finds the newer attempt's record.`,
    );
    this.key = key;
    this.fence = fence;
    this.url = url;
  }
}

/**
 * A push with compare-and-swap kept losing: the remote ref moved between the check and the push
 * every time (another writer is active). Nothing was force-pushed over the other writer's
 * commits. Retryable: the next attempt re-checks the ref for the effect's trailer first.
 */
export class RemoteRefContendedError extends ChamviError {
  static override readonly errorName = 'RemoteRefContendedError';
  readonly ref: string;
  /** How many pushes in a row lost the compare-and-swap. */
  readonly attempts: number;
  constructor({ ref, attempts }: { readonly ref: string; readonly attempts: number }) {
    super(
      `The remote ref ${ref} moved between check and push ${attempts} times in a row; nothing was pushed over the other writer. Retry later; the retry looks for this effect's commit trailer before pushing again.`,
    );
    this.ref = ref;
    this.attempts = attempts;
  }
}

/**
 * A git command failed (a network error, a missing remote, a rejected push other than a lost
 * compare-and-swap). Retryable, since most failures are transient; the message carries git's own
 * error output to tell the rest apart.
 */
export class GitCommandError extends ChamviError {
  static override readonly errorName = 'GitCommandError';
  readonly args: readonly string[];
  /** git's exit code, or the signal or error code that ended it. */
  readonly exitCode: number | string | undefined;
  readonly stderr: string;
  constructor({
    args,
    exitCode,
    stderr,
  }: {
    readonly args: readonly string[];
    readonly exitCode: number | string | undefined;
    readonly stderr: string;
  }) {
    super(
      `git ${args[0] ?? ''} failed (exit ${String(exitCode)}): ${stderr.trim() || 'no error output'}. Check the repository and the remote; the call can be retried.`,
    );
    this.args = args;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/**
 * An effect store spec (`createEffectStore(spec)`) or store option could not be understood, for
 * example an unknown URL scheme or an empty path. Not retryable: the same spec fails again.
 */
export class InvalidEffectStoreSpecError extends ChamviError {
  static override readonly errorName = 'InvalidEffectStoreSpecError';
}

/**
 * An option of a worker, its activities or a stream reader is outside its accepted range (an
 * `abortGraceMs` of `NaN`, a `pollMs` of 0, a stream cursor that is no cursor). The message names
 * the option, the value and the range. Thrown where the option is given, before anything starts.
 * Not retryable: the same option is refused again.
 */
export class InvalidOptionError extends ChamviError {
  static override readonly errorName = 'InvalidOptionError';
}

/**
 * A run stream store was used after its `close()`: a reader or writer outlived the store (a
 * server shutting down with pages open, a worker that closed its stream). Readers waiting when
 * it closed were released; nothing was read or written. Not retryable: open a new store.
 */
export class RunStreamClosedError extends ChamviError {
  static override readonly errorName = 'RunStreamClosedError';
  constructor(store: string) {
    super(`The ${store} is closed: nothing was read or written. Open a new store; a closed one stays closed.`);
  }
}

/** A run named an agent that no worker registered. Not retryable. */
export class UnknownAgentError extends ChamviError {
  static override readonly errorName = 'UnknownAgentError';
  readonly agentName: string;
  constructor({
    agentName,
    known,
  }: {
    readonly agentName: string;
    /** The agents the worker registers. */ readonly known: readonly string[];
  }) {
    super(
      `No agent named "${agentName}" is registered on this worker (registered: ${known.length > 0 ? known.join(', ') : 'none'}). Register it with the worker's agents option, or fix the agent name of the run.`,
    );
    this.agentName = agentName;
  }
}

/** A tool call named a tool the agent does not have. Not retryable; the model is told. */
export class UnknownToolError extends ChamviError {
  static override readonly errorName = 'UnknownToolError';
  readonly toolName: string;
  constructor({
    toolName,
    agentName,
    known,
  }: {
    readonly toolName: string;
    readonly agentName: string;
    /** The tools the agent has. */
    readonly known: readonly string[];
  }) {
    super(
      `Agent "${agentName}" has no tool named "${toolName}" (its tools: ${known.length > 0 ? known.join(', ') : 'none'}). Call one of its tools, or add the tool to the agent.`,
    );
    this.toolName = toolName;
  }
}

/**
 * A model step returned two or more tool calls with one `toolCallId`. The AI SDK pairs each tool
 * result with its call by that id, and the run keeps a call's approval and result under it, so
 * such a step cannot be run faithfully: it is refused before any of its calls is planned or its
 * answer stored. Providers give every call of a step its own id; a duplicate comes from a
 * provider or a model adapter that breaks that rule. Not retryable: the run fails; fix the
 * adapter (a custom model's `doGenerate`/`doStream` must give each call its own id).
 */
export class DuplicateToolCallIdError extends ChamviError {
  static override readonly errorName = 'DuplicateToolCallIdError';
  readonly toolCallId: string;
  /** The tools of the calls that share the id, in step order. */
  readonly toolNames: readonly string[];
  constructor({
    toolCallId,
    toolNames,
    where,
  }: {
    readonly toolCallId: string;
    readonly toolNames: readonly string[];
    /** Which step returned them, for the message (`Model step 2 of agent "triage"`). */
    readonly where: string;
  }) {
    super(
      `${where} returned ${toolNames.length} tool calls with the id "${toolCallId}" (${toolNames.join(', ')}); tool call ids must be unique within a step, since each result and approval is matched to its call by id. Nothing of the step was run or stored. The model provider or its adapter produced the duplicate: fix or update it (a custom model must give each tool call of a step its own toolCallId).`,
    );
    this.toolCallId = toolCallId;
    this.toolNames = toolNames;
  }
}

/**
 * An effect tool's result (from `execute` or `alreadyApplied`) cannot be turned into JSON (a BigInt,
 * a cycle), so it can be neither recorded nor sent to the workflow. The effect was applied: the key
 * is recorded as done with this error in place of the result, so no retry and no later call applies
 * it again; every call of the key fails with this error. Not retryable: return plain JSON.
 */
export class EffectResultNotSerializableError extends ChamviError {
  static override readonly errorName = 'EffectResultNotSerializableError';
  readonly toolName: string;
  readonly key: string;
  /** What JSON cannot hold, and where (`BigInt at $.id`). */
  readonly reason: string;
  constructor({ toolName, key, reason }: { readonly toolName: string; readonly key: string; readonly reason: string }) {
    super(
      `Tool "${toolName}" applied effect "${key}" but its result cannot be serialised as JSON (${reason}). The effect is recorded as done and will not be applied again. Return plain JSON from execute and alreadyApplied (convert BigInt to a string, drop back-references).`,
    );
    this.toolName = toolName;
    this.key = key;
    this.reason = reason;
  }
}

/**
 * An effect tool's result is larger than Temporal accepts in one payload (2 MiB by default), so the
 * activity cannot hand it to the workflow. The effect was applied and its result recorded, so a
 * retry would only fail the same way: not retryable. Return a reference (an id, a URL) instead of
 * the content, or shrink what the model sees with `toModelOutput`.
 */
export class EffectResultTooLargeError extends ChamviError {
  static override readonly errorName = 'EffectResultTooLargeError';
  readonly toolName: string;
  readonly key: string;
  /** The size of the activity's answer as JSON, in bytes. */
  readonly bytes: number;
  /** The payload limit it is over, in bytes. */
  readonly limit: number;
  constructor({
    toolName,
    key,
    bytes,
    limit,
  }: {
    readonly toolName: string;
    readonly key: string;
    readonly bytes: number;
    readonly limit: number;
  }) {
    super(
      `Tool "${toolName}" applied effect "${key}" but its result is ${bytes} bytes as JSON, over Temporal's payload limit of ${limit} bytes. The effect is recorded and will not be applied again. Return a reference (an id, a URL) instead of the content, or shrink what the model sees with toModelOutput.`,
    );
    this.toolName = toolName;
    this.key = key;
    this.bytes = bytes;
    this.limit = limit;
  }
}

/**
 * A call that needs approval reached the activity that runs it without a valid approval (no
 * decision, a denial, or a token that does not verify for this run, call, effect key and input
 * fingerprint). Not retryable; nothing was applied, and the model is told.
 */
export class ApprovalRequiredError extends ChamviError {
  static override readonly errorName = 'ApprovalRequiredError';
}

/**
 * An approval secret too short to be unguessable: under 16 bytes (as UTF-8, for a string). Thrown
 * where the secret is given: creating a worker or its plugin (the `approvalSecret` option, else
 * `CHAMVI_APPROVAL_SECRET`), and minting or checking a token with it. The message names where the
 * secret came from and its length, never the secret. Not retryable: use 32 random bytes
 * (`openssl rand -base64 32`).
 */
export class InvalidApprovalSecretError extends ChamviError {
  static override readonly errorName = 'InvalidApprovalSecretError';
}

/**
 * Claims `createApprovalToken` cannot sign: a claim of the wrong type (ids, key, fingerprint and
 * nonce are strings; `approved` is a boolean), or an `expiresAt` that is not a finite number of ms
 * since the epoch. Not retryable: take the claims from the pending approval (`approvalClaimsFor`).
 */
export class InvalidApprovalClaimsError extends ChamviError {
  static override readonly errorName = 'InvalidApprovalClaimsError';
}

/**
 * The effect key an effect-call activity was handed differs from the key the tool computes for the
 * call's input on this worker. The activity never trusts a key it is given (an approval is bound to
 * its key, so a key reused for another input would apply that input under the first one's
 * approval): nothing was applied. Not retryable. Workers of one task queue must run the same tool
 * definitions, and `effectKey` must be a pure function of the input, the context and the call options.
 */
export class EffectKeyMismatchError extends ChamviError {
  static override readonly errorName = 'EffectKeyMismatchError';
  constructor({
    toolName,
    given,
    computed,
  }: {
    readonly toolName: string;
    /** The key the activity input carries. */
    readonly given: string;
    /** The key this worker computes for the call. */
    readonly computed: string;
  }) {
    super(
      `Effect call of tool "${toolName}" came with key "${given}", but this worker computes "${computed}" for its input; nothing was applied. Make sure every worker of the task queue runs the same tool definitions and that effectKey depends only on its arguments.`,
    );
  }
}

/**
 * A value has no faithful canonical JSON form (see `canonicalJson`): a BigInt, a cycle, or a value
 * JSON would write lossily (`NaN` as `null`, a `Map` as `{}`, an `undefined` array element as
 * `null`), so two different inputs would share a default effect key. Thrown before anything is
 * claimed or executed. Not retryable: the same input fails again.
 *
 * A `TypeError` (as the BigInt and cycle errors always were) that also carries this library's
 * error brand, so `isInstance` recognises it across realms and Temporal activities do not retry it.
 */
export class UnsupportedJsonValueError extends TypeError {
  static readonly errorName = 'UnsupportedJsonValueError';
  /** Always `false`, from the failure catalogue (see `ChamviError.retryable`). */
  readonly retryable: boolean;
  /** Where the value sits in the input, as `$.a[1].n`. */
  readonly path: string;
  /** What the value is (`NaN`, `a Map`, `BigInt`, `cyclic structure`, ...). */
  readonly valueKind: string;
  constructor({
    path,
    valueKind,
    message,
  }: {
    readonly path: string;
    readonly valueKind: string;
    readonly message: string;
  }) {
    super(message);
    this.name = UnsupportedJsonValueError.errorName;
    this.retryable = failurePolicyOf(this.name)?.retried === true;
    this.path = path;
    this.valueKind = valueKind;
    // ChamviError's brand: this class cannot extend ChamviError (it must stay a TypeError), but
    // ChamviError.isInstance and the activities' failure mapping must see it as one of ours.
    Object.defineProperty(this, Symbol.for('@chamvi/temporal/error'), { value: true, enumerable: false });
  }

  /** Realm-safe type guard (see `ChamviError.isInstance`). */
  static isInstance(error: unknown): error is UnsupportedJsonValueError {
    return ChamviError.isInstance.call(UnsupportedJsonValueError, error);
  }
}

/**
 * A run cannot start or go on with what it was given: neither or both of `prompt` and `messages`,
 * a duration it cannot read (`'3 fortnights'`), or a call that needs approval in a loop without an
 * approval gate. Raised by the workflow code, which fails the run with it (a failure of type
 * `InvalidAgentInputError`: compare `failure.type` with `InvalidAgentInputError.errorName`). Not
 * retryable: start the run again with an input it can take.
 * @public
 */
export class InvalidAgentInputError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'InvalidAgentInputError';
}

/**
 * The run refuses an approval decision: its token does not verify for the call it names (another
 * run, call, key, input or request; an expired token; another secret), the call is not waiting for
 * a decision (decided already, or never asked), or the run has checked too many tokens that did
 * not verify. Raised by the workflow code: the update (`decideApproval`) fails with it and the
 * call keeps waiting; a signal's refusal is logged. Not retryable as it is: mint the token with
 * the workers' secret for the pending request. A client meets it as the update's failure (its
 * `type` is `ApprovalRefusedError.errorName`).
 * @public
 */
export class ApprovalRefusedError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'ApprovalRefusedError';
}

/**
 * A claim or renewal asked an effect store for a lease it cannot honour: a `leaseMs` that is not
 * a whole number of milliseconds from 0 to 2^31 - 1 (the longest timer Node can set), or an empty
 * owner token. Thrown before anything is written. Not retryable: the same request is
 * refused again; fix the `leaseMs` the caller passes.
 */
export class InvalidClaimRequestError extends ChamviError {
  static override readonly errorName = 'InvalidClaimRequestError';
}

/**
 * An effect key (or another text field of a record) holds something the store cannot keep, such as
 * a NUL character (U+0000), which PostgreSQL text cannot contain. Thrown before anything is written
 * and before the effect. Not retryable: the same key is refused again; change `effectKey` (or the
 * run id or tool name it is built from) so it contains no such character.
 */
export class EffectKeyNotStorableError extends ChamviError {
  static override readonly errorName = 'EffectKeyNotStorableError';
}

/**
 * An effect store could not be opened at all: its SQLite file (or the folder for it) cannot be
 * created or opened (permissions, a file where a folder should be, a read-only disk). The message
 * names the path. Not retryable: retrying the call does not change the file system; fix the path.
 */
export class EffectStoreOpenError extends ChamviError {
  static override readonly errorName = 'EffectStoreOpenError';
}

/**
 * An optional package that a feature needs is not installed (for example `pg` for the PostgreSQL
 * effect store). Not retryable: install the package named in the message.
 */
export class MissingPeerDependencyError extends ChamviError {
  static override readonly errorName = 'MissingPeerDependencyError';
  readonly packageName: string;
  constructor({
    packageName,
    feature,
    cause,
  }: {
    readonly packageName: string;
    /** What needs it, for the message (`The PostgreSQL effect store`). */
    readonly feature: string;
    /** The import's own error. */
    readonly cause?: unknown;
  }) {
    super(
      `${feature} needs the package "${packageName}", which is not installed. Run \`npm install ${packageName}\` in your project.`,
      cause === undefined ? undefined : { cause },
    );
    this.packageName = packageName;
  }
}

/**
 * A run's conversation is not in the store: an entry the run's next step or tool call builds on
 * (`key`) was never written to this store, or was pruned. The workers of a task queue must share
 * one store (the same SQLite file on one machine, the same PostgreSQL database across machines);
 * a memory store, or a custom store without conversations, keeps them in one process. Not retried:
 * the run fails, since no answer of the model can bring the conversation back.
 */
export class ConversationEntryMissingError extends ChamviError {
  static override readonly errorName = 'ConversationEntryMissingError';
  readonly runId: string;
  readonly key: string;
  constructor({ runId, key }: { readonly runId: string; readonly key: string }) {
    super(
      `The conversation of run ${runId} is missing entry ${key} in the store. Every worker of the task queue must use the same store (one SQLite file, or one PostgreSQL database), and the store's retention must outlive the run; start the run again if its conversation was pruned.`,
    );
    this.runId = runId;
    this.key = key;
  }
}

/**
 * A run's conversation, read back from the store, is not what the run wrote: an entry (`key`)
 * does not hash to its key (its message or parent was changed), its parent link leaves the chain,
 * or the links run in a cycle; or an append found a row already stored under one of its keys
 * with another message, parent or run (written ahead of time by someone else). Entries are
 * content-addressed and never rewritten, so only a write from outside this library (or a damaged
 * database) does this. Not retried: the run fails rather than show the model, its tools or its
 * approval rules a history its own steps did not write.
 */
export class ConversationEntryCorruptError extends ChamviError {
  static override readonly errorName = 'ConversationEntryCorruptError';
  readonly runId: string;
  readonly key: string;
  /** What is wrong with the entry, in a few words. */
  readonly problem: string;
  constructor({ runId, key, problem }: { readonly runId: string; readonly key: string; readonly problem: string }) {
    super(
      `The conversation of run ${runId} is corrupt in the store at entry ${key}: ${problem}. Conversation entries are written once and never changed, so the row was changed (or planted) by something other than chamvi, or the database is damaged. Restore the conversation tables from a backup, or delete the run's entries and start the run again; check who else writes to the store.`,
    );
    this.runId = runId;
    this.key = key;
    this.problem = problem;
  }
}

/**
 * A payload Temporal's External Storage offloaded to the store is not there (pruned, or this
 * worker or client uses another store than the worker that stored it). Retried: a store that
 * cannot be reached right now fails the same way.
 */
export class OffloadedPayloadMissingError extends ChamviError {
  static override readonly errorName = 'OffloadedPayloadMissingError';
  constructor(readonly key: string) {
    super(
      `The payload ${key} that Temporal's External Storage offloaded to the chamvi store is not in it. Give every worker and client of the namespace the same store (chamviDataConverter(store)), and keep the store's retention longer than the workflows and their history retention.`,
    );
  }
}

/**
 * A payload Temporal's External Storage offloaded to the store reads back as something other than
 * what was stored: its bytes no longer hash to the key they are filed under (the row was edited,
 * truncated or replaced), or they hash to it but are not a payload the chamvi driver wrote. Such a
 * row is a workflow's input or an activity's input or result, so it is never handed on. `store`
 * names the store (an SQLite file, or the store's class), `problem` what is wrong with the row.
 *
 * Not retryable: the key is the SHA-256 of the bytes, so every read returns the same wrong bytes
 * until someone restores the row. An activity whose input it is fails for good and the run fails;
 * a workflow task that reads it fails, and Temporal retries the task (the run waits, and nothing
 * reaches the model or a tool) until the row is restored or the run is terminated or reset.
 */
export class OffloadedPayloadCorruptError extends ChamviError {
  static override readonly errorName = 'OffloadedPayloadCorruptError';
  /** The payload's key (its claim in the history): the base64url SHA-256 of the bytes stored. */
  readonly key: string;
  /** The store, as `SQLite file /abs/path` or the store's class in parentheses. */
  readonly store: string;
  /** What is wrong with the row, as the message says it. */
  readonly problem: string;
  constructor({
    key,
    store,
    problem,
    cause,
  }: {
    readonly key: string;
    readonly store: string;
    readonly problem: string;
    /** The decoder's own error, when decoding failed. */
    readonly cause?: unknown;
  }) {
    super(
      `The payload ${key} that Temporal's External Storage offloaded to the chamvi store ${store} ${problem}: it is not what was stored, so it is not used. Restore the row from a backup (its key is the base64url SHA-256 of its bytes) or terminate the run, and find what writes to the store's payload table besides the chamvi workers.`,
      cause === undefined ? undefined : { cause },
    );
    this.key = key;
    this.store = store;
    this.problem = problem;
  }
}

/**
 * A compensation was asked for an effect the store cannot vouch for: no record of its key, a
 * record of another tool, of another input (its fingerprint differs) or of another run, a record
 * without a result (`unserializable`), or a key that is itself a compensation's. The compensation
 * activity reads the original's record instead of trusting what the workflow hands it, so nothing
 * was undone. Not retryable: the same record answers the same.
 * @beta
 */
export class CompensationRefusedError extends ChamviError {
  static override readonly errorName = 'CompensationRefusedError';
  constructor({ key, toolName, reason }: { readonly key: string; readonly toolName: string; readonly reason: string }) {
    super(
      `Compensation of "${key}" (tool "${toolName}") refused: ${reason}. Nothing was undone; compensations run only for effects this store recorded as applied by the same tool, input and run.`,
    );
  }
}

/**
 * A failed or cancelled run ran its compensations (`compensateOn`) or a rollback ran them
 * (`rollbackRun`), and at least one kept failing: the rollback is incomplete. The run's effect
 * report names each call (`compensation.status: 'compensation-failed'`, its last error and
 * attempts); the failure's cause is what ended the run. Raised by workflow code; not retryable
 * (the compensations had their retries). Run `rollbackRun` again once the remote is back: undos
 * done already are recorded and not applied again.
 * @beta
 */
export class RollbackIncompleteError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'RollbackIncompleteError';
  constructor({ runId, failed, total }: { readonly runId: string; readonly failed: number; readonly total: number }) {
    super(
      `Run "${runId}": rollback incomplete, ${failed} of ${total} compensation(s) failed (see the effect report). Fix the remote and call rollbackRun(client, workflowId): finished compensations are not applied again.`,
    );
  }
}

/**
 * `rollbackRun` was called for a run that is still running. A rollback undoes a finished run's
 * effects; a running run may still apply more. Wait for its result, or cancel it (with
 * `compensateOn: ['cancel']` it compensates itself).
 * @beta
 */
export class RunNotFinishedError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'RunNotFinishedError';
  constructor(workflowId: string) {
    super(
      `rollbackRun: workflow "${workflowId}" is still running; wait for it to finish (or cancel it) before rolling it back.`,
    );
  }
}

/**
 * An agent tool's `execute` was called outside the engines that run its sub-agent (`generateText`
 * with the tool, say). Give the tool to an agent run by a chamvi worker or by `runAgent`.
 * @beta
 */
export class AgentToolOutsideRunError extends ChamviError {
  /** {@inheritDoc ChamviError.errorName} */
  static override readonly errorName = 'AgentToolOutsideRunError';
  constructor(agent: string) {
    super(
      `The agent tool of "${agent}" runs its agent as a sub-agent run: give it to an agent that a chamvi worker or runAgent runs, not to generateText directly.`,
    );
  }
}
