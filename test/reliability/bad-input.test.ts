// Bad input: each case gets a clear error naming the problem and the fix, and nothing is lost or
// applied by mistake. One time-skipping environment and one workflow bundle for the file.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { z } from 'zod';
import { defaultEffectKey, defineAgent, defineEffectTool } from '../../src/index.js';
import { applyEffect } from '../../src/effects/effect-protocol.js';
import { createToolContext } from '../../src/context/tool-context.js';
import {
  EffectStoreError,
  InvalidEffectKeyError,
  InvalidEffectStoreSpecError,
  InvalidEffectToolError,
} from '../../src/errors/errors.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import { wrapToolsForRun } from '../../src/agent/wrap-tools-for-run.js';
import { createEffectStore } from '../../src/stores/index.js';
import { PostgresEffectStore } from '../../src/stores/postgres-effect-store.js';
import { runAgentUnderTest } from '../../testing/run-agent-under-test.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { createTimeSkippingEnvironment } from '../../testing/test-environment.js';
import { writeObservations } from './matrix.js';
import { bundleTestWorkflows } from '../fixtures/bundle.js';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
const rows: Array<{ scenario: string; expected: string; observed: string }> = [];

beforeAll(async () => {
  [env, bundle] = await Promise.all([createTimeSkippingEnvironment(), bundleTestWorkflows()]);
}, 120_000);

afterAll(async () => {
  writeObservations('bad-input', rows);
  await env?.teardown();
});

const quiet = { warn: () => undefined };

function counted(effectKey?: (input: { id: string }) => unknown) {
  const applied: string[] = [];
  const tool = defineEffectTool({
    description: 'Applies an effect.',
    inputSchema: z.object({ id: z.string() }),
    ...(effectKey ? { effectKey: effectKey as (input: { id: string }) => string } : {}),
    execute: async ({ id }) => {
      applied.push(id);
      return { id };
    },
  });
  return { applied, tool };
}

async function run(
  model: LanguageModelV4,
  tool = counted().tool,
  name = `bad-${Math.random().toString(36).slice(2, 8)}`,
) {
  return runAgentUnderTest({
    env,
    workflowBundle: bundle,
    agents: [
      {
        agent: defineAgent({ name, model, tools: { effect: tool } }),
        tools: { effect: { retry: { initialInterval: '10 ms' } } },
      },
    ],
    store: new MemoryEffectStore(),
    prompt: 'go',
  });
}

async function failure(p: Promise<unknown>): Promise<ApplicationFailure | undefined> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  let cause: unknown = (error as WorkflowFailedError).cause;
  while (cause instanceof Error && !(cause instanceof ApplicationFailure)) cause = cause.cause;
  return cause instanceof ApplicationFailure ? cause : undefined;
}

describe('bad input under Temporal', () => {
  it('input failing the schema, and a tool the agent does not have: told to the model, no activity, nothing applied', async () => {
    const { applied, tool } = counted();
    const model = scriptedModel([
      {
        toolCalls: [
          { toolName: 'effect', input: { id: 42 } },
          { toolName: 'delete_repo', input: {} },
        ],
      },
      { text: 'Sorry.' },
    ]);
    const result = await run(model, tool);
    const told = JSON.stringify(result.messages.find((m) => m.role === 'tool'));
    expect(applied).toEqual([]);
    expect(result.counts['chamvi.effectCall']).toBeUndefined();
    expect(told).toContain('Invalid input for tool effect');
    expect(told).toContain("Model tried to call unavailable tool 'delete_repo'. Available tools: effect.");
    rows.push({
      scenario: 'input fails the schema',
      expected: 'model told, no activity, 0 effects',
      observed: `told "Invalid input for tool effect"; ${applied.length} effects`,
    });
    rows.push({
      scenario: 'tool the agent lacks',
      expected: 'model told the available tools',
      observed: 'told "unavailable tool \'delete_repo\'. Available tools: effect."',
    });
  });

  it('an unknown agent name fails the run at once, naming the registered agents', async () => {
    const { tool } = counted();
    const agent = defineAgent({ name: 'known', model: scriptedModel([]), tools: { effect: tool } });
    const cause = await failure(
      runAgentUnderTest({
        env,
        workflowBundle: bundle,
        agents: [agent],
        agent: 'unknown',
        store: new MemoryEffectStore(),
        prompt: 'go',
      }),
    );
    expect(cause?.type).toBe('UnknownAgentError');
    expect(cause?.message).toContain('No agent named "unknown" is registered on this worker (registered: known)');
    rows.push({
      scenario: 'unknown agent',
      expected: 'run fails, UnknownAgentError names the registered agents',
      observed: cause?.message ?? '',
    });
  });

  it.each([
    ['an empty string', ''],
    ['not a string', 42],
  ])(
    'a custom effect key that is %s fails the run with InvalidEffectKeyError before anything is applied',
    async (what, key) => {
      const { applied, tool } = counted(() => key);
      const cause = await failure(
        run(scriptedModel([{ toolCalls: [{ toolName: 'effect', input: { id: 'k' } }] }, { text: 'x' }]), tool),
      );
      expect(applied).toEqual([]);
      expect(cause?.type).toBe('InvalidEffectKeyError');
      expect(cause?.message).toMatch(
        /effectKey of tool "effect" returned (an empty string|a value of type number)\. Return a non-empty string/,
      );
      expect(cause?.nonRetryable).toBe(true);
      rows.push({
        scenario: `custom key ${what}`,
        expected: 'InvalidEffectKeyError, not retried, 0 effects',
        observed: `${cause?.type}; ${applied.length} effects`,
      });
    },
  );

  it('a model step returning garbage: unparsable tool input goes back to the model; nothing applied', async () => {
    const { applied, tool } = counted();
    let step = 0;
    const garbage = {
      specificationVersion: 'v4',
      provider: 'garbage',
      modelId: 'garbage',
      supportedUrls: {},
      doGenerate: () =>
        Promise.resolve({
          content:
            step++ === 0
              ? [{ type: 'tool-call', toolCallId: 'g1', toolName: 'effect', input: '{"id": ' }]
              : [{ type: 'text', text: 'Recovered.' }],
          finishReason: { unified: step === 1 ? 'tool-calls' : 'stop', raw: undefined },
          usage: {
            inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 1, text: 1, reasoning: 0 },
          },
          warnings: [],
        }),
      doStream: () => {
        throw new Error('no streaming');
      },
    } as unknown as LanguageModelV4;
    const result = await run(garbage, tool);
    const told = JSON.stringify(result.messages.find((m) => m.role === 'tool'));
    expect(applied).toEqual([]);
    expect(told).toContain('Invalid input for tool effect');
    expect(result.output.text).toBe('Recovered.');
    rows.push({
      scenario: 'model returns unparsable tool input',
      expected: 'model told, run continues, 0 effects',
      observed: `told "Invalid input for tool effect"; final text "${result.output.text}"`,
    });
  });

  it('a history replayed with changed workflow code reports non-determinism', async () => {
    const result = await run(
      scriptedModel([{ toolCalls: [{ toolName: 'effect', input: { id: 'h' } }] }, { text: 'Done.' }]),
    );
    const history = await result.handle.fetchHistory();
    await expect(
      Worker.runReplayHistory({ workflowBundle: bundle }, history, result.handle.workflowId),
    ).resolves.toBeUndefined();
    const changed = fileURLToPath(new URL('../fixtures/workflows-changed.ts', import.meta.url));
    const replay = Worker.runReplayHistory({ workflowsPath: changed }, history, result.handle.workflowId);
    await expect(replay).rejects.toThrow(DeterminismViolationError);
    await expect(replay).rejects.toThrow(/Nondeterminism|nondeterminism|doesn't match/);
    rows.push({
      scenario: 'history replayed with changed workflow code',
      expected: 'DeterminismViolationError',
      observed: 'DeterminismViolationError (same code replays cleanly)',
    });
  }, 60_000);
});

describe('bad input outside Temporal', () => {
  const ctx = createToolContext({ runId: 'run-bad', agent: 'test' });
  const options = { toolCallId: 't', messages: [], context: ctx };

  it('BigInt or cyclic input: a TypeError naming where, and execute never runs', async () => {
    const { applied, tool } = counted();
    expect(() => defaultEffectKey('run', 'effect', { n: 1n })).toThrow(
      /BigInt at \$\.n cannot be serialised\. Convert it to a string or number/,
    );
    const cyclic: Record<string, unknown> = { id: 'c' };
    cyclic['self'] = cyclic;
    const wrapped = wrapToolsForRun({ effect: tool }, ctx, new MemoryEffectStore(), undefined, { logger: quiet });
    const execute = wrapped.effect.execute as unknown as (input: unknown, o: typeof options) => Promise<unknown>;
    await expect(execute(cyclic, options)).rejects.toThrow(/cyclic structure at \$\.self cannot be serialised/);
    expect(applied).toEqual([]);
    rows.push({
      scenario: 'BigInt or cyclic input',
      expected: 'TypeError naming the path and the fix; 0 effects',
      observed: 'TypeError "BigInt at $.n ..." / "cyclic structure at $.self ..."; 0 effects',
    });
  });

  it('a missing execute fails at definition time', () => {
    expect(() => defineEffectTool({ description: 'x', inputSchema: z.object({}) } as never)).toThrow(
      InvalidEffectToolError,
    );
    expect(() => defineEffectTool({ description: 'x', inputSchema: z.object({}) } as never)).toThrow(
      'defineEffectTool: execute is missing. An effect tool must apply its effect itself; add execute(input, { context }) to the definition.',
    );
    rows.push({
      scenario: 'missing execute',
      expected: 'InvalidEffectToolError at definition',
      observed: 'InvalidEffectToolError "execute is missing ... add execute(input, { context })"',
    });
  });

  it('a malformed store URL is refused with the accepted forms; an unreachable one fails closed, naming host and port', async () => {
    for (const spec of ['postgres://host:notaport/db', 'mysql://localhost/db', 'sqlite:', '']) {
      expect(() => createEffectStore(spec)).toThrow(InvalidEffectStoreSpecError);
      expect(() => createEffectStore(spec)).toThrow(/Accepted forms:/);
    }
    const { applied, tool } = counted();
    const store = new PostgresEffectStore({
      pool: { connectionString: 'postgres://postgres@127.0.0.1:1/test', connectionTimeoutMillis: 500 },
    });
    const call = applyEffect({ tool, toolName: 'effect', input: { id: 'u' }, ctx, options }, { store, logger: quiet });
    await expect(call).rejects.toThrow(EffectStoreError);
    await expect(call).rejects.toThrow(/127\.0\.0\.1:1/);
    expect(applied).toEqual([]);
    await store.close();
    rows.push({
      scenario: 'malformed / unreachable store URL',
      expected: 'InvalidEffectStoreSpecError with accepted forms / EffectStoreError naming host:port, 0 effects',
      observed: 'as expected; 0 effects',
    });
  });

  it('InvalidEffectKeyError outside Temporal too', async () => {
    const { applied, tool } = counted(() => '');
    const call = applyEffect(
      { tool, toolName: 'effect', input: { id: 'e' }, ctx, options },
      { store: new MemoryEffectStore(), logger: quiet },
    );
    await expect(call).rejects.toThrow(InvalidEffectKeyError);
    expect(applied).toEqual([]);
  });
});
