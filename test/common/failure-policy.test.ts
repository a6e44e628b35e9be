// The failure catalogue (src/errors/failure-policy.ts) against what it describes: every error class of
// the library (its `retryable` flag is read from it), the failures the activities and the workflow
// code fail with (`toFailure`), the activities' non-retryable type list, and the docs' "Error
// policy" table.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { toActivityOptions } from '../../common/activity-options.js';
import { withFailureMapping } from '../../activities/failures.js';
import { toFailure } from '../../common/to-failure.js';
import {
  FAILURE_CATALOGUE,
  NON_RETRYABLE_TYPES,
  failurePolicyOf,
  type FailurePolicy,
} from '../../src/errors/failure-policy.js';
import * as errors from '../../src/errors/errors.js';
import { ModelCallFailedError, ModelCallRejectedError } from '../../activities/model-call-error.js';
import { UnsupportedAgentSettingError } from '../../src/errors/unsupported-agent-setting-error.js';
import {
  ApprovalAmbiguousError,
  ApprovalNotPendingError,
  ApprovalSecretMissingError,
} from '../../client/approvals-client.js';
import { EffectStoreUnavailableError } from '../../worker/effect-store-check.js';
import { WorkerHealthError } from '../../worker/worker-health.js';
import {
  ApprovalAnswerRefusedError,
  ChatForbiddenError,
  ChatRequestError,
  ChatTurnConflictError,
} from '../../worker/stream/chat-errors.js';
import { TemporalServerNotFoundError } from '../../testing/temporal-server-not-found-error.js';
import { ApplicationFailure } from '@temporalio/common';

const catalogue = FAILURE_CATALOGUE as Record<string, FailurePolicy>;
const root = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/** One instance of every error class of the library, built as the library builds it. */
const EXAMPLES: Record<string, () => Error & { readonly retryable: boolean }> = {
  ToolNotAllowedError: () => new errors.ToolNotAllowedError('comment'),
  InvalidToolInputError: () => new errors.InvalidToolInputError('issue 7 is closed'),
  InvalidEffectToolError: () => new errors.InvalidEffectToolError('no execute'),
  InvalidEffectKeyError: () => new errors.InvalidEffectKeyError({ toolName: 'comment', got: '' }),
  LegacyContextFieldError: () => new errors.LegacyContextFieldError('runId'),
  InvalidToolContextError: () => new errors.InvalidToolContextError({ where: 'wrapToolsForRun', ctx: {} }),
  EffectBusyError: () => new errors.EffectBusyError({ key: 'k', waitedMs: 10 }),
  EffectClaimLostError: () => new errors.EffectClaimLostError('k'),
  EffectStoreError: () => new errors.EffectStoreError('down'),
  EffectOutcomeUnknownError: () => new errors.EffectOutcomeUnknownError('lagging'),
  EffectStoreSchemaError: () => new errors.EffectStoreSchemaError('a column is missing'),
  IdempotencyKeyInProgressError: () => new errors.IdempotencyKeyInProgressError({ key: 'k', url: 'http://api' }),
  IdempotencyKeyReusedError: () => new errors.IdempotencyKeyReusedError({ key: 'k', url: 'http://api' }),
  IdempotentRequestError: () =>
    new errors.IdempotentRequestError({ status: 503, key: 'k', url: 'http://api', detail: '' }),
  EffectFenceRefusedError: () => new errors.EffectFenceRefusedError({ key: 'k', fence: 2, url: 'http://api' }),
  RemoteRefContendedError: () => new errors.RemoteRefContendedError({ ref: 'refs/heads/main', attempts: 3 }),
  GitCommandError: () => new errors.GitCommandError({ args: ['push'], exitCode: 1, stderr: 'rejected' }),
  InvalidEffectStoreSpecError: () => new errors.InvalidEffectStoreSpecError('bad spec'),
  RunStreamClosedError: () => new errors.RunStreamClosedError('memory run stream'),
  UnknownAgentError: () => new errors.UnknownAgentError({ agentName: 'nobody', known: [] }),
  UnknownToolError: () => new errors.UnknownToolError({ toolName: 'nothing', agentName: 'responder', known: [] }),
  EffectResultNotSerializableError: () =>
    new errors.EffectResultNotSerializableError({ toolName: 't', key: 'k', reason: 'BigInt at $.n' }),
  EffectResultTooLargeError: () =>
    new errors.EffectResultTooLargeError({ toolName: 't', key: 'k', bytes: 3, limit: 2 }),
  ApprovalRequiredError: () => new errors.ApprovalRequiredError('no approval'),
  InvalidApprovalSecretError: () => new errors.InvalidApprovalSecretError('approvalSecret is 15 bytes long'),
  InvalidApprovalClaimsError: () => new errors.InvalidApprovalClaimsError('expiresAt is NaN'),
  DuplicateToolCallIdError: () =>
    new errors.DuplicateToolCallIdError({
      toolCallId: 'call-1',
      toolNames: ['deploy', 'deploy'],
      where: 'Model step 0',
    }),
  EffectKeyMismatchError: () => new errors.EffectKeyMismatchError({ toolName: 't', given: 'a', computed: 'b' }),
  UnsupportedJsonValueError: () =>
    new errors.UnsupportedJsonValueError({ path: '$.n', valueKind: 'NaN', message: 'NaN at $.n' }),
  InvalidClaimRequestError: () => new errors.InvalidClaimRequestError('leaseMs is NaN'),
  InvalidOptionError: () => new errors.InvalidOptionError('pollMs is 0'),
  EffectKeyNotStorableError: () => new errors.EffectKeyNotStorableError('NUL in the key'),
  EffectStoreOpenError: () => new errors.EffectStoreOpenError('cannot open /x'),
  MissingPeerDependencyError: () =>
    new errors.MissingPeerDependencyError({ packageName: 'pg', feature: 'The PostgreSQL store' }),
  EffectStoreUnavailableError: () => new EffectStoreUnavailableError('down'),
  WorkerHealthError: () => new WorkerHealthError('port in use'),
  ApprovalNotPendingError: () => new ApprovalNotPendingError('not waiting'),
  ApprovalAmbiguousError: () => new ApprovalAmbiguousError('two runs wait on call-1'),
  ConversationEntryMissingError: () => new errors.ConversationEntryMissingError({ runId: 'run-1', key: 'entry-key' }),
  ConversationEntryCorruptError: () =>
    new errors.ConversationEntryCorruptError({
      runId: 'run-1',
      key: 'entry-key',
      problem: 'its key is not the hash of its content',
    }),
  OffloadedPayloadMissingError: () => new errors.OffloadedPayloadMissingError('payload-key'),
  OffloadedPayloadCorruptError: () =>
    new errors.OffloadedPayloadCorruptError({
      key: 'payload-key',
      store: 'SQLite file /tmp/x.db',
      problem: 'does not match its content hash',
    }),
  ApprovalSecretMissingError: () => new ApprovalSecretMissingError('no secret'),
  ModelCallRejectedError: () => new ModelCallRejectedError('refused', { statusCode: 401 }),
  UnsupportedAgentSettingError: () =>
    new UnsupportedAgentSettingError({ setting: 'prepareStep.toolsContext', message: 'not here' }),
  ModelCallFailedError: () => new ModelCallFailedError('rate limited', { statusCode: 429, retryAfterMs: 1000 }),
  InvalidAgentInputError: () => new errors.InvalidAgentInputError('neither prompt nor messages'),
  ApprovalRefusedError: () => new errors.ApprovalRefusedError('the token does not verify'),
  CompensationRefusedError: () =>
    new errors.CompensationRefusedError({ key: 'run-1:note:abc', toolName: 'note', reason: 'no record' }),
  RollbackIncompleteError: () => new errors.RollbackIncompleteError({ runId: 'run-1', failed: 1, total: 3 }),
  RunNotFinishedError: () => new errors.RunNotFinishedError('agent-noter-1'),
  AgentToolOutsideRunError: () => new errors.AgentToolOutsideRunError('scribe'),
  ChatRequestError: () => new ChatRequestError('no chat id'),
  ChatTurnConflictError: () => new ChatTurnConflictError('the previous turn is still running'),
  ApprovalAnswerRefusedError: () => new ApprovalAnswerRefusedError('another call'),
  ChatForbiddenError: () => new ChatForbiddenError('not yours'),
  TemporalServerNotFoundError: () => new TemporalServerNotFoundError('no binary'),
};

/** The `errorName` of every error class in the library's source folders. */
function errorClassNames(): string[] {
  const names: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(root(dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const source = readFileSync(root(path), 'utf8');
        for (const match of source.matchAll(/static (?:override )?readonly errorName = '(\w+)'/g)) {
          if (match[1] !== 'ChamviError') names.push(match[1] ?? '');
        }
      }
    }
  };
  for (const dir of ['src', 'common', 'workflows', 'activities', 'worker', 'client', 'testing']) walk(dir);
  return names.sort();
}

describe('the failure catalogue', () => {
  it('names every error class of the library, and only those: no failure type exists as a string alone', () => {
    const classes = errorClassNames();
    expect(classes.length).toBeGreaterThan(40);
    expect(Object.keys(catalogue).sort()).toEqual(classes);
    expect(Object.keys(EXAMPLES).sort()).toEqual(classes);
  });

  it.each(Object.keys(EXAMPLES))("%s: the error's retryable flag is the catalogue's retried", (name) => {
    const error = EXAMPLES[name]!();
    expect(error.name).toBe(name);
    const policy = catalogue[name];
    expect(policy).toBeDefined();
    if (policy?.retried === 'by-status') return;
    expect(error.retryable).toBe(policy?.retried);
  });

  it('IdempotentRequestError, retried by status: 408, 425, 429 and 5xx retried, other 4xx not', () => {
    expect(catalogue['IdempotentRequestError']?.retried).toBe('by-status');
    const retryable = (status: number) =>
      new errors.IdempotentRequestError({ status, key: 'k', url: 'http://api', detail: '' }).retryable;
    expect([408, 425, 429, 500, 503].map(retryable)).toEqual([true, true, true, true, true]);
    expect([400, 401, 404, 410].map(retryable)).toEqual([false, false, false, false]);
  });

  it('workflow code fails with catalogued error classes, never with a failure type written as a string', () => {
    const workflowSource = readdirSync(root('workflows'))
      .map((file) => readFileSync(root(`workflows/${file}`), 'utf8'))
      .join('\n');
    expect(Object.keys(catalogue).filter((type) => workflowSource.includes(`'${type}'`))).toEqual([]);
    expect(workflowSource).toMatch(/toFailure\(\s*new InvalidAgentInputError\(/);
    expect(workflowSource).toMatch(/toFailure\(\s*new ApprovalRefusedError\(/);
  });

  it('never tells the model to carry on after a setup error, and never retries a failure the model must correct', () => {
    expect(failurePolicyOf('EffectStoreSchemaError')).toEqual({ retried: false, then: 'run' });
    expect(failurePolicyOf('EffectKeyMismatchError')).toEqual({ retried: false, then: 'run' });
    expect(failurePolicyOf('ToolNotAllowedError')).toEqual({ retried: false, then: 'model' });
    expect(failurePolicyOf('a tool of its own')).toBeUndefined();
    expect(failurePolicyOf('hasOwnProperty')).toBeUndefined();
    expect(failurePolicyOf(null)).toBeUndefined();
  });

  it('NON_RETRYABLE_TYPES is every catalogued failure a run can meet that is not retried, and the activities fail them non-retryably', async () => {
    const expected = Object.entries(catalogue)
      .filter(([, policy]) => policy.retried === false && policy.then !== 'caller')
      .map(([type]) => type);
    expect([...NON_RETRYABLE_TYPES].sort()).toEqual(expected.sort());
    expect(NON_RETRYABLE_TYPES).toEqual(expect.arrayContaining(['EffectStoreSchemaError', 'InvalidToolInputError']));
    // Not by listing them in every activity's retry policy (half a kilobyte of history each)...
    const listed = toActivityOptions({ retry: { nonRetryableErrorTypes: ['MyError'] } }).retry?.nonRetryableErrorTypes;
    expect(listed).toEqual(['MyError']);
    // ...but in the activities' failure mapping: a tool's own error of a catalogued name is not retried.
    class ToolNotAllowedError extends Error {}
    const mapped = await withFailureMapping(() => Promise.reject(new ToolNotAllowedError('not here'))).catch(
      (e: unknown) => e,
    );
    expect(mapped).toMatchObject({ type: 'ToolNotAllowedError', nonRetryable: true, message: 'not here' });
    class OwnError extends Error {}
    const own = await withFailureMapping(() => Promise.reject(new OwnError('mine'))).catch((e: unknown) => e);
    expect(own).toBeInstanceOf(OwnError);
  });
});

describe('toFailure', () => {
  it('fails with a chamvi error by its name, its message, stack and cause, non-retryable as the catalogue says', () => {
    const cause = new Error('connection refused');
    const refused = new errors.InvalidAgentInputError('needs exactly one of prompt or messages');
    const failure = toFailure(refused);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: 'InvalidAgentInputError',
      message: 'needs exactly one of prompt or messages',
      nonRetryable: true,
      stack: refused.stack,
    });
    const retried = toFailure(new errors.EffectStoreError('down', { cause }));
    expect(retried).toMatchObject({ type: 'EffectStoreError', nonRetryable: false });
    expect(retried.cause).toBe(cause);
    // Retried by status: the instance decides.
    const status = (s: number) =>
      toFailure(new errors.IdempotentRequestError({ status: s, key: 'k', url: 'http://api', detail: '' }));
    expect([status(503).nonRetryable, status(400).nonRetryable]).toEqual([false, true]);
  });

  it("gives another error the type Temporal would (its constructor's name), not retried when the catalogue says so", () => {
    class ToolNotAllowedError extends Error {}
    class OwnError extends Error {}
    expect(toFailure(new ToolNotAllowedError('mine'))).toMatchObject({
      type: 'ToolNotAllowedError',
      nonRetryable: true,
    });
    expect(toFailure(new OwnError('mine'))).toMatchObject({ type: 'OwnError', nonRetryable: false });
  });

  it("keeps an ApplicationFailure's type, message, stack and a nonRetryable it already has; overrides go on top of a copy", () => {
    const root = new Error('root');
    const own = ApplicationFailure.create({
      type: 'OwnError',
      message: 'mine',
      nonRetryable: true,
      nextRetryDelay: 1_000,
      cause: root,
    });
    const kept = toFailure(own);
    expect(kept).toBeInstanceOf(ApplicationFailure);
    expect(kept).toMatchObject({ type: 'OwnError', message: 'mine', nonRetryable: true, nextRetryDelay: 1_000 });
    expect(kept.stack).toBe(own.stack);
    expect(kept.cause).toBe(root);
    // A failure thrown from a constant is thrown again on the next attempt: it must not keep this one's details.
    const constant = ApplicationFailure.create({ type: 'EffectKeyMismatchError', message: 'other key' });
    expect(toFailure(constant, { details: [{ attempt: 2 }] })).toMatchObject({
      type: 'EffectKeyMismatchError',
      nonRetryable: true,
      details: [{ attempt: 2 }],
    });
    expect(constant).toMatchObject({ nonRetryable: false, details: undefined });
  });
});

/** What the docs' Error policy page says for each kind of policy, in its table. */
const GROUPS: ReadonlyArray<{ readonly when: (policy: FailurePolicy) => boolean; readonly text: string }> = [
  {
    when: (p) => p.retried === false && p.then === 'model',
    text: 'not retried; the model gets a tool error at once (`<type>: <message>`) and can correct the call',
  },
  {
    when: (p) => p.retried === false && p.then === 'run',
    text: "not retried; the run fails (the worker's setup or a tool definition is wrong, and no answer of the model can fix it)",
  },
  {
    when: (p) => p.retried === true && p.then === 'model',
    text: "retried by the activity's retry policy (default 10 attempts, 1 s doubling to 1 min); after the last attempt the model gets `Tool <name> failed after its retries: <message>`",
  },
  {
    when: (p) => p.retried === true && p.then === 'run',
    text: "retried by the model step's retry policy (default 10 attempts, 1 s doubling to 1 min; the provider's `retry-after` when it sends one); after the last attempt the run fails",
  },
  {
    when: (p) => p.retried === 'by-status',
    text: 'by HTTP status: 408, 425, 429 and 5xx retried as above; another 4xx is not retried and the model is told at once',
  },
  {
    when: (p) => p.then === 'caller',
    text: 'never inside a run: thrown to the caller (a worker starting, a client helper, an approval decision or a chat request that is refused, a test environment)',
  },
];

function expectedRows(): string[][] {
  return GROUPS.map(({ when, text }) => [
    Object.entries(catalogue)
      .filter(([, policy]) => when(policy))
      .map(([type]) => `\`${type}\``)
      .join(', '),
    text,
  ]);
}

/** The rows of the Error policy page's table (docs/concepts/error-policy.md), as trimmed cells. */
function readmeRows(): string[][] {
  const page = readFileSync(root('docs/concepts/error-policy.md'), 'utf8');
  return page
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .slice(1)
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

describe("the docs' Error policy table", () => {
  it('lists every catalogued failure in the row of its policy, and no catalogued failure elsewhere', () => {
    const rows = readmeRows();
    const expected = expectedRows();
    const markdown = expected.map(([names, text]) => `| ${names} | ${text} |`).join('\n');
    for (const row of expected) expect({ row, in: rows }).toEqual({ row, in: expect.arrayContaining([row]) });
    const others = rows.filter((row) => !expected.some((e) => e[0] === row[0]));
    const named = others.flatMap((row) => [...(row[0] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1] ?? ''));
    expect({ stray: named.filter((name) => catalogue[name] !== undefined), rowsToPaste: markdown }).toEqual({
      stray: [],
      rowsToPaste: markdown,
    });
  });
});
