// The failure catalogue (common/failure-policy.ts) against what it describes: every error class of
// the library (its `retryable` flag), the activities' non-retryable type list, the workflow code
// that raises failure types of its own, and the README's "Error policy" table.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { toActivityOptions } from '../../common/activity-options.js';
import { withFailureMapping } from '../../activities/failures.js';
import {
  FAILURE_CATALOGUE,
  NON_RETRYABLE_TYPES,
  failurePolicyOf,
  type FailurePolicy,
} from '../../common/failure-policy.js';
import * as errors from '../../src/errors/errors.js';
import { ModelCallFailedError, ModelCallRejectedError } from '../../activities/model-call-error.js';
import { UnsupportedAgentSettingError } from '../../src/errors/unsupported-agent-setting-error.js';
import { ApprovalNotPendingError, ApprovalSecretMissingError } from '../../worker/approvals-client.js';
import { EffectStoreUnavailableError } from '../../worker/effect-store-check.js';
import { WorkerHealthError } from '../../worker/worker-health.js';

const catalogue = FAILURE_CATALOGUE as Record<string, FailurePolicy>;
const root = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/** One instance of every error class of the library, built as the library builds it. */
const EXAMPLES: Record<string, () => Error & { readonly retryable: boolean }> = {
  ToolNotAllowedError: () => new errors.ToolNotAllowedError('comment'),
  InvalidToolInputError: () => new errors.InvalidToolInputError('issue 7 is closed'),
  InvalidEffectToolError: () => new errors.InvalidEffectToolError('no execute'),
  InvalidEffectKeyError: () => new errors.InvalidEffectKeyError('comment', ''),
  LegacyContextFieldError: () => new errors.LegacyContextFieldError('runId'),
  InvalidToolContextError: () => new errors.InvalidToolContextError('wrapToolsForRun', {}),
  EffectBusyError: () => new errors.EffectBusyError('k', 10),
  EffectClaimLostError: () => new errors.EffectClaimLostError('k'),
  EffectStoreError: () => new errors.EffectStoreError('down'),
  EffectOutcomeUnknownError: () => new errors.EffectOutcomeUnknownError('lagging'),
  EffectStoreSchemaError: () => new errors.EffectStoreSchemaError('a column is missing'),
  IdempotencyKeyInProgressError: () => new errors.IdempotencyKeyInProgressError('k', 'http://api'),
  IdempotencyKeyReusedError: () => new errors.IdempotencyKeyReusedError('k', 'http://api'),
  IdempotentRequestError: () => new errors.IdempotentRequestError(503, 'k', 'http://api', ''),
  EffectFenceRefusedError: () => new errors.EffectFenceRefusedError('k', 2, 'http://api'),
  RemoteRefContendedError: () => new errors.RemoteRefContendedError('refs/heads/main', 3),
  GitCommandError: () => new errors.GitCommandError(['push'], 1, 'rejected'),
  InvalidEffectStoreSpecError: () => new errors.InvalidEffectStoreSpecError('bad spec'),
  RunStreamClosedError: () => new errors.RunStreamClosedError('memory run stream'),
  UnknownAgentError: () => new errors.UnknownAgentError('nobody', []),
  UnknownToolError: () => new errors.UnknownToolError('nothing', 'responder', []),
  EffectResultNotSerializableError: () => new errors.EffectResultNotSerializableError('t', 'k', 'BigInt at $.n'),
  EffectResultTooLargeError: () => new errors.EffectResultTooLargeError('t', 'k', 3, 2),
  ApprovalRequiredError: () => new errors.ApprovalRequiredError('no approval'),
  EffectKeyMismatchError: () => new errors.EffectKeyMismatchError('t', 'a', 'b'),
  UnsupportedJsonValueError: () => new errors.UnsupportedJsonValueError('$.n', 'NaN', 'NaN at $.n'),
  InvalidClaimRequestError: () => new errors.InvalidClaimRequestError('leaseMs is NaN'),
  InvalidOptionError: () => new errors.InvalidOptionError('pollMs is 0'),
  EffectKeyNotStorableError: () => new errors.EffectKeyNotStorableError('NUL in the key'),
  EffectStoreOpenError: () => new errors.EffectStoreOpenError('cannot open /x'),
  MissingPeerDependencyError: () => new errors.MissingPeerDependencyError('pg', 'The PostgreSQL store'),
  EffectStoreUnavailableError: () => new EffectStoreUnavailableError('down'),
  WorkerHealthError: () => new WorkerHealthError('port in use'),
  ApprovalNotPendingError: () => new ApprovalNotPendingError('not waiting'),
  ConversationEntryMissingError: () => new errors.ConversationEntryMissingError('run-1', 'entry-key'),
  ConversationEntryCorruptError: () =>
    new errors.ConversationEntryCorruptError('run-1', 'entry-key', 'its key is not the hash of its content'),
  OffloadedPayloadMissingError: () => new errors.OffloadedPayloadMissingError('payload-key'),
  ApprovalSecretMissingError: () => new ApprovalSecretMissingError('no secret'),
  ModelCallRejectedError: () => new ModelCallRejectedError('refused', 401),
  UnsupportedAgentSettingError: () => new UnsupportedAgentSettingError('prepareStep.toolsContext', 'not here'),
  ModelCallFailedError: () => new ModelCallFailedError('rate limited', 429, 1000),
};

/** The error classes src/errors/errors.ts exports (each has a stable `errorName`). */
const errorClassNames = Object.values(errors)
  .filter((value): value is typeof value & { errorName: string } => typeof value === 'function' && 'errorName' in value)
  .map((value) => value.errorName);

describe('the failure catalogue', () => {
  it('has an entry for every error class in src/errors/errors.ts, and an example builds each', () => {
    expect(errorClassNames.length).toBeGreaterThan(25);
    expect(errorClassNames.filter((name) => catalogue[name] === undefined)).toEqual([]);
    expect(errorClassNames.filter((name) => EXAMPLES[name] === undefined)).toEqual([]);
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
    const retryable = (status: number) => new errors.IdempotentRequestError(status, 'k', 'http://api', '').retryable;
    expect([408, 425, 429, 500, 503].map(retryable)).toEqual([true, true, true, true, true]);
    expect([400, 401, 404, 410].map(retryable)).toEqual([false, false, false, false]);
  });

  it('names only failures that exist: an error class, or a type the workflow code raises itself', () => {
    const workflowSource = readdirSync(root('workflows'))
      .map((file) => readFileSync(root(`workflows/${file}`), 'utf8'))
      .join('\n');
    const classes = new Set([...errorClassNames, ...Object.keys(EXAMPLES)]);
    const raisedByWorkflows = Object.keys(catalogue).filter((type) => !classes.has(type));
    expect(raisedByWorkflows.sort()).toEqual(['ApprovalRefusedError', 'InvalidAgentInputError']);
    for (const type of raisedByWorkflows) expect(workflowSource).toContain(`'${type}'`);
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

/** What the README says for each kind of policy, in its "Error policy" table. */
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
    text: 'never inside a run: thrown to the caller (a worker starting, a client helper, an approval decision that is refused)',
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

/** The rows of the README's Error policy table, as trimmed cells. */
function readmeRows(): string[][] {
  const readme = readFileSync(root('README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Error policy'), readme.indexOf('## Tutorial'));
  return section
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

describe("the README's Error policy table", () => {
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
